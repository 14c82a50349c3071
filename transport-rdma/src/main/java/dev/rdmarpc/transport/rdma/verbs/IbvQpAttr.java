package dev.rdmarpc.transport.rdma.verbs;

import static dev.rdmarpc.transport.rdma.verbs.CLayouts.*;

import java.lang.foreign.StructLayout;

/** Layouts of {@code struct ibv_global_route}, {@code struct ibv_ah_attr} and {@code struct ibv_qp_attr}. */
final class IbvQpAttr {
    static final StructLayout GLOBAL_ROUTE = struct("ibv_global_route",
            IbvGid.LAYOUT.withName("dgid"),
            u32("flow_label"),
            u8("sgid_index"),
            u8("hop_limit"),
            u8("traffic_class"));

    static final StructLayout AH_ATTR = struct("ibv_ah_attr",
            GLOBAL_ROUTE.withName("grh"),
            u16("dlid"),
            u8("sl"),
            u8("src_path_bits"),
            u8("static_rate"),
            u8("is_global"),
            u8("port_num"));

    static final StructLayout LAYOUT = struct("ibv_qp_attr",
            s32("qp_state"),
            s32("cur_qp_state"),
            s32("path_mtu"),
            s32("path_mig_state"),
            u32("qkey"),
            u32("rq_psn"),
            u32("sq_psn"),
            u32("dest_qp_num"),
            u32("qp_access_flags"),
            IbvQpInitAttr.CAP.withName("cap"),
            AH_ATTR.withName("ah_attr"),
            AH_ATTR.withName("alt_ah_attr"),
            u16("pkey_index"),
            u16("alt_pkey_index"),
            u8("en_sqd_async_notify"),
            u8("sq_draining"),
            u8("max_rd_atomic"),
            u8("max_dest_rd_atomic"),
            u8("min_rnr_timer"),
            u8("port_num"),
            u8("timeout"),
            u8("retry_cnt"),
            u8("rnr_retry"),
            u8("alt_port_num"),
            u8("alt_timeout"),
            u32("rate_limit"));

    static final long SIZE = LAYOUT.byteSize();
    static final long QP_STATE = offset(LAYOUT, "qp_state");
    static final long CUR_QP_STATE = offset(LAYOUT, "cur_qp_state");
    static final long PATH_MTU = offset(LAYOUT, "path_mtu");
    static final long QKEY = offset(LAYOUT, "qkey");
    static final long RQ_PSN = offset(LAYOUT, "rq_psn");
    static final long SQ_PSN = offset(LAYOUT, "sq_psn");
    static final long DEST_QP_NUM = offset(LAYOUT, "dest_qp_num");
    static final long QP_ACCESS_FLAGS = offset(LAYOUT, "qp_access_flags");
    static final long CAP_MAX_INLINE_DATA = offset(LAYOUT, "cap.max_inline_data");
    static final long AH_DGID = offset(LAYOUT, "ah_attr.grh.dgid");
    static final long AH_FLOW_LABEL = offset(LAYOUT, "ah_attr.grh.flow_label");
    static final long AH_SGID_INDEX = offset(LAYOUT, "ah_attr.grh.sgid_index");
    static final long AH_HOP_LIMIT = offset(LAYOUT, "ah_attr.grh.hop_limit");
    static final long AH_TRAFFIC_CLASS = offset(LAYOUT, "ah_attr.grh.traffic_class");
    static final long AH_DLID = offset(LAYOUT, "ah_attr.dlid");
    static final long AH_SL = offset(LAYOUT, "ah_attr.sl");
    static final long AH_SRC_PATH_BITS = offset(LAYOUT, "ah_attr.src_path_bits");
    static final long AH_STATIC_RATE = offset(LAYOUT, "ah_attr.static_rate");
    static final long AH_IS_GLOBAL = offset(LAYOUT, "ah_attr.is_global");
    static final long AH_PORT_NUM = offset(LAYOUT, "ah_attr.port_num");
    static final long PKEY_INDEX = offset(LAYOUT, "pkey_index");
    static final long MAX_RD_ATOMIC = offset(LAYOUT, "max_rd_atomic");
    static final long MAX_DEST_RD_ATOMIC = offset(LAYOUT, "max_dest_rd_atomic");
    static final long MIN_RNR_TIMER = offset(LAYOUT, "min_rnr_timer");
    static final long PORT_NUM = offset(LAYOUT, "port_num");
    static final long TIMEOUT = offset(LAYOUT, "timeout");
    static final long RETRY_CNT = offset(LAYOUT, "retry_cnt");
    static final long RNR_RETRY = offset(LAYOUT, "rnr_retry");

    private IbvQpAttr() {
    }
}
