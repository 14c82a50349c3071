package dev.rdmarpc.transport.rdma.verbs;

import static dev.rdmarpc.transport.rdma.verbs.CLayouts.*;

import java.lang.foreign.StructLayout;

/** Layout of the leading members of {@code struct ibv_srq} (library-allocated; never allocated here). */
final class IbvSrqStruct {
    static final StructLayout LAYOUT = structPrefix("ibv_srq",
            ptr("context"),
            ptr("srq_context"),
            ptr("pd"),
            u32("handle"));

    static final long SIZE = LAYOUT.byteSize();
    static final long CONTEXT = offset(LAYOUT, "context");

    private IbvSrqStruct() {
    }
}
