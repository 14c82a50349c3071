package dev.rdmarpc.transport.rdma.verbs;

import static dev.rdmarpc.transport.rdma.verbs.CLayouts.*;

import java.lang.foreign.StructLayout;

/** Layout of {@code struct ibv_mw} (memory window). */
final class IbvMwStruct {
    static final StructLayout LAYOUT = struct("ibv_mw",
            ptr("context"),
            ptr("pd"),
            u32("rkey"),
            u32("handle"),
            s32("type"));

    static final long SIZE = LAYOUT.byteSize();
    static final long RKEY = offset(LAYOUT, "rkey");
    static final long TYPE = offset(LAYOUT, "type");

    private IbvMwStruct() {
    }
}
