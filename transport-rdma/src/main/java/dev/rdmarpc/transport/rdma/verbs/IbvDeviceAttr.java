package dev.rdmarpc.transport.rdma.verbs;

import static dev.rdmarpc.transport.rdma.verbs.CLayouts.*;

import java.lang.foreign.StructLayout;

/** Layout of {@code struct ibv_device_attr} (filled by {@code ibv_query_device}). */
final class IbvDeviceAttr {
    static final StructLayout LAYOUT = struct("ibv_device_attr",
            chars("fw_ver", 64),
            be64("node_guid"),
            be64("sys_image_guid"),
            u64("max_mr_size"),
            u64("page_size_cap"),
            u32("vendor_id"),
            u32("vendor_part_id"),
            u32("hw_ver"),
            s32("max_qp"),
            s32("max_qp_wr"),
            u32("device_cap_flags"),
            s32("max_sge"),
            s32("max_sge_rd"),
            s32("max_cq"),
            s32("max_cqe"),
            s32("max_mr"),
            s32("max_pd"),
            s32("max_qp_rd_atom"),
            s32("max_ee_rd_atom"),
            s32("max_res_rd_atom"),
            s32("max_qp_init_rd_atom"),
            s32("max_ee_init_rd_atom"),
            s32("atomic_cap"),
            s32("max_ee"),
            s32("max_rdd"),
            s32("max_mw"),
            s32("max_raw_ipv6_qp"),
            s32("max_raw_ethy_qp"),
            s32("max_mcast_grp"),
            s32("max_mcast_qp_attach"),
            s32("max_total_mcast_qp_attach"),
            s32("max_ah"),
            s32("max_fmr"),
            s32("max_map_per_fmr"),
            s32("max_srq"),
            s32("max_srq_wr"),
            s32("max_srq_sge"),
            u16("max_pkeys"),
            u8("local_ca_ack_delay"),
            u8("phys_port_cnt"));

    static final long SIZE = LAYOUT.byteSize();

    private IbvDeviceAttr() {
    }

    static long off(String field) {
        return offset(LAYOUT, field);
    }
}
