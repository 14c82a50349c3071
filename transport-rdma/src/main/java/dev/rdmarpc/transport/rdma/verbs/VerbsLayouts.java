package dev.rdmarpc.transport.rdma.verbs;

import java.lang.foreign.GroupLayout;
import java.util.List;

/** Every C struct layout the binding uses, so the layout test can check each against the installed header. */
final class VerbsLayouts {
    /**
     * One C type as the Java side sees it.
     *
     * @param cType    the C type, e.g. {@code struct ibv_wc}
     * @param layout   the Java layout (member names = C member names)
     * @param complete whether the layout covers the whole type (then its size must equal sizeof)
     */
    record CType(String cType, GroupLayout layout, boolean complete) {
        /** Every named member with its C designator, offset and size. */
        List<CLayouts.Member> members() {
            return CLayouts.members(layout);
        }
    }

    static final List<CType> ALL = List.of(
            new CType("union ibv_gid", IbvGid.LAYOUT, true),
            new CType("struct ibv_device_attr", IbvDeviceAttr.LAYOUT, true),
            new CType("struct ibv_odp_caps", IbvDeviceAttrEx.ODP_CAPS, true),
            new CType("struct ibv_device_attr_ex", IbvDeviceAttrEx.LAYOUT, false),
            new CType("struct ibv_port_attr", IbvPortAttr.LAYOUT, true),
            new CType("struct ibv_context_ops", IbvContextStruct.OPS, true),
            new CType("struct ibv_context", IbvContextStruct.LAYOUT, false),
            new CType("struct ibv_pd", IbvPdStruct.LAYOUT, true),
            new CType("struct ibv_mr", IbvMrStruct.LAYOUT, true),
            new CType("struct ibv_mw", IbvMwStruct.LAYOUT, true),
            new CType("struct ibv_mw_bind_info", IbvSendWr.MW_BIND_INFO, true),
            new CType("struct ibv_mw_bind", IbvMwBind.LAYOUT, true),
            new CType("struct ibv_comp_channel", IbvCompChannelStruct.LAYOUT, true),
            new CType("struct ibv_cq", IbvCqStruct.LAYOUT, false),
            new CType("struct ibv_srq", IbvSrqStruct.LAYOUT, false),
            new CType("struct ibv_qp", IbvQpStruct.LAYOUT, false),
            new CType("struct ibv_srq_attr", IbvSrqAttr.LAYOUT, true),
            new CType("struct ibv_srq_init_attr", IbvSrqAttr.INIT_LAYOUT, true),
            new CType("struct ibv_qp_cap", IbvQpInitAttr.CAP, true),
            new CType("struct ibv_qp_init_attr", IbvQpInitAttr.LAYOUT, true),
            new CType("struct ibv_global_route", IbvQpAttr.GLOBAL_ROUTE, true),
            new CType("struct ibv_ah_attr", IbvQpAttr.AH_ATTR, true),
            new CType("struct ibv_qp_attr", IbvQpAttr.LAYOUT, true),
            new CType("struct ibv_sge", IbvSge.LAYOUT, true),
            new CType("struct ibv_send_wr", IbvSendWr.LAYOUT, true),
            new CType("struct ibv_recv_wr", IbvRecvWr.LAYOUT, true),
            new CType("struct ibv_wc", IbvWc.LAYOUT, true),
            new CType("struct ibv_async_event", IbvAsyncEvent.LAYOUT, true));

    private VerbsLayouts() {
    }
}
