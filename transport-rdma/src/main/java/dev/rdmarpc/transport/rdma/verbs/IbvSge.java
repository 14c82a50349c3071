package dev.rdmarpc.transport.rdma.verbs;

import static dev.rdmarpc.transport.rdma.verbs.CLayouts.*;

import java.lang.foreign.StructLayout;

/** Layout of {@code struct ibv_sge} (one scatter/gather element). */
final class IbvSge {
    static final StructLayout LAYOUT = struct("ibv_sge",
            u64("addr"),
            u32("length"),
            u32("lkey"));

    static final long SIZE = LAYOUT.byteSize();
    static final long ADDR = offset(LAYOUT, "addr");
    static final long LENGTH = offset(LAYOUT, "length");
    static final long LKEY = offset(LAYOUT, "lkey");

    private IbvSge() {
    }
}
