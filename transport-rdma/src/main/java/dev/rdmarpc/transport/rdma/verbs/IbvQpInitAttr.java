package dev.rdmarpc.transport.rdma.verbs;

import static dev.rdmarpc.transport.rdma.verbs.CLayouts.*;

import java.lang.foreign.StructLayout;

/** Layouts of {@code struct ibv_qp_cap} and {@code struct ibv_qp_init_attr}. */
final class IbvQpInitAttr {
    static final StructLayout CAP = struct("ibv_qp_cap",
            u32("max_send_wr"),
            u32("max_recv_wr"),
            u32("max_send_sge"),
            u32("max_recv_sge"),
            u32("max_inline_data"));

    static final StructLayout LAYOUT = struct("ibv_qp_init_attr",
            ptr("qp_context"),
            ptr("send_cq"),
            ptr("recv_cq"),
            ptr("srq"),
            CAP.withName("cap"),
            s32("qp_type"),
            s32("sq_sig_all"));

    static final long SIZE = LAYOUT.byteSize();
    static final long QP_CONTEXT = offset(LAYOUT, "qp_context");
    static final long SEND_CQ = offset(LAYOUT, "send_cq");
    static final long RECV_CQ = offset(LAYOUT, "recv_cq");
    static final long SRQ = offset(LAYOUT, "srq");
    static final long CAP_MAX_SEND_WR = offset(LAYOUT, "cap.max_send_wr");
    static final long CAP_MAX_RECV_WR = offset(LAYOUT, "cap.max_recv_wr");
    static final long CAP_MAX_SEND_SGE = offset(LAYOUT, "cap.max_send_sge");
    static final long CAP_MAX_RECV_SGE = offset(LAYOUT, "cap.max_recv_sge");
    static final long CAP_MAX_INLINE_DATA = offset(LAYOUT, "cap.max_inline_data");
    static final long QP_TYPE = offset(LAYOUT, "qp_type");
    static final long SQ_SIG_ALL = offset(LAYOUT, "sq_sig_all");

    private IbvQpInitAttr() {
    }
}
