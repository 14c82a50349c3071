package dev.rdmarpc.transport.rdma.verbs;

import static dev.rdmarpc.transport.rdma.verbs.CLayouts.*;

import java.lang.foreign.StructLayout;

/** Layout of the leading members of {@code struct ibv_qp} (library-allocated; never allocated here). */
final class IbvQpStruct {
    static final StructLayout LAYOUT = structPrefix("ibv_qp",
            ptr("context"),
            ptr("qp_context"),
            ptr("pd"),
            ptr("send_cq"),
            ptr("recv_cq"),
            ptr("srq"),
            u32("handle"),
            u32("qp_num"),
            s32("state"),
            s32("qp_type"));

    static final long SIZE = LAYOUT.byteSize();
    static final long CONTEXT = offset(LAYOUT, "context");
    static final long QP_NUM = offset(LAYOUT, "qp_num");
    static final long STATE = offset(LAYOUT, "state");
    static final long QP_TYPE = offset(LAYOUT, "qp_type");

    private IbvQpStruct() {
    }
}
