package dev.rdmarpc.transport.rdma.verbs;

import static dev.rdmarpc.transport.rdma.verbs.CLayouts.*;

import java.lang.foreign.StructLayout;

/** Layout of {@code struct ibv_mr}. */
final class IbvMrStruct {
    static final StructLayout LAYOUT = struct("ibv_mr",
            ptr("context"),
            ptr("pd"),
            ptr("addr"),
            sizeT("length"),
            u32("handle"),
            u32("lkey"),
            u32("rkey"));

    static final long SIZE = LAYOUT.byteSize();
    static final long ADDR = offset(LAYOUT, "addr");
    static final long LENGTH = offset(LAYOUT, "length");
    static final long HANDLE = offset(LAYOUT, "handle");
    static final long LKEY = offset(LAYOUT, "lkey");
    static final long RKEY = offset(LAYOUT, "rkey");

    private IbvMrStruct() {
    }
}
