package dev.rdmarpc.transport.rdma.verbs;

import static dev.rdmarpc.transport.rdma.verbs.CLayouts.*;

import java.lang.foreign.StructLayout;

/** Layout of {@code struct ibv_pd}. */
final class IbvPdStruct {
    static final StructLayout LAYOUT = struct("ibv_pd",
            ptr("context"),
            u32("handle"));

    static final long SIZE = LAYOUT.byteSize();
    static final long CONTEXT = offset(LAYOUT, "context");
    static final long HANDLE = offset(LAYOUT, "handle");

    private IbvPdStruct() {
    }
}
