package dev.rdmarpc.transport.rdma.verbs;

import static dev.rdmarpc.transport.rdma.verbs.CLayouts.*;

import java.lang.foreign.StructLayout;

/** Layout of {@code struct ibv_port_attr} (the full, current struct; see {@link IbvContext#queryPort}). */
final class IbvPortAttr {
    static final StructLayout LAYOUT = struct("ibv_port_attr",
            s32("state"),
            s32("max_mtu"),
            s32("active_mtu"),
            s32("gid_tbl_len"),
            u32("port_cap_flags"),
            u32("max_msg_sz"),
            u32("bad_pkey_cntr"),
            u32("qkey_viol_cntr"),
            u16("pkey_tbl_len"),
            u16("lid"),
            u16("sm_lid"),
            u8("lmc"),
            u8("max_vl_num"),
            u8("sm_sl"),
            u8("subnet_timeout"),
            u8("init_type_reply"),
            u8("active_width"),
            u8("active_speed"),
            u8("phys_state"),
            u8("link_layer"),
            u8("flags"),
            u16("port_cap_flags2"));

    static final long SIZE = LAYOUT.byteSize();

    private IbvPortAttr() {
    }

    static long off(String field) {
        return offset(LAYOUT, field);
    }
}
