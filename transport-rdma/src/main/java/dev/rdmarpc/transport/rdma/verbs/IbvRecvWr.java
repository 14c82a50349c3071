package dev.rdmarpc.transport.rdma.verbs;

import static dev.rdmarpc.transport.rdma.verbs.CLayouts.*;

import java.lang.foreign.StructLayout;

/** Layout of {@code struct ibv_recv_wr}. */
final class IbvRecvWr {
    static final StructLayout LAYOUT = struct("ibv_recv_wr",
            u64("wr_id"),
            ptr("next"),
            ptr("sg_list"),
            s32("num_sge"));

    static final long SIZE = LAYOUT.byteSize();
    static final long WR_ID = offset(LAYOUT, "wr_id");
    static final long NEXT = offset(LAYOUT, "next");
    static final long SG_LIST = offset(LAYOUT, "sg_list");
    static final long NUM_SGE = offset(LAYOUT, "num_sge");

    private IbvRecvWr() {
    }
}
