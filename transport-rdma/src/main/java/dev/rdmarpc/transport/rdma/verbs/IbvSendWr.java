package dev.rdmarpc.transport.rdma.verbs;

import static dev.rdmarpc.transport.rdma.verbs.CLayouts.*;

import java.lang.foreign.StructLayout;

/** Layouts of {@code struct ibv_send_wr} and {@code struct ibv_mw_bind_info}. */
final class IbvSendWr {
    static final StructLayout MW_BIND_INFO = struct("ibv_mw_bind_info",
            ptr("mr"),
            u64("addr"),
            u64("length"),
            u32("mw_access_flags"));

    static final StructLayout LAYOUT = struct("ibv_send_wr",
            u64("wr_id"),
            ptr("next"),
            ptr("sg_list"),
            s32("num_sge"),
            s32("opcode"),
            u32("send_flags"),
            union(ANONYMOUS_PREFIX + "_imm",
                    be32("imm_data"),
                    u32("invalidate_rkey")),
            union("wr",
                    struct("rdma", u64("remote_addr"), u32("rkey")),
                    struct("atomic", u64("remote_addr"), u64("compare_add"), u64("swap"), u32("rkey")),
                    struct("ud", ptr("ah"), u32("remote_qpn"), u32("remote_qkey"))),
            union("qp_type",
                    struct("xrc", u32("remote_srqn"))),
            union(ANONYMOUS_PREFIX + "_bind_tso",
                    struct("bind_mw", ptr("mw"), u32("rkey"), MW_BIND_INFO.withName("bind_info")),
                    struct("tso", ptr("hdr"), u16("hdr_sz"), u16("mss"))));

    static final long SIZE = LAYOUT.byteSize();
    static final long WR_ID = offset(LAYOUT, "wr_id");
    static final long NEXT = offset(LAYOUT, "next");
    static final long SG_LIST = offset(LAYOUT, "sg_list");
    static final long NUM_SGE = offset(LAYOUT, "num_sge");
    static final long OPCODE = offset(LAYOUT, "opcode");
    static final long SEND_FLAGS = offset(LAYOUT, "send_flags");
    static final long IMM_DATA = offset(LAYOUT, ANONYMOUS_PREFIX + "_imm.imm_data");
    static final long INVALIDATE_RKEY = offset(LAYOUT, ANONYMOUS_PREFIX + "_imm.invalidate_rkey");
    static final long RDMA_REMOTE_ADDR = offset(LAYOUT, "wr.rdma.remote_addr");
    static final long RDMA_RKEY = offset(LAYOUT, "wr.rdma.rkey");
    static final long BIND_MW_MW = offset(LAYOUT, ANONYMOUS_PREFIX + "_bind_tso.bind_mw.mw");
    static final long BIND_MW_RKEY = offset(LAYOUT, ANONYMOUS_PREFIX + "_bind_tso.bind_mw.rkey");
    static final long BIND_MW_MR = offset(LAYOUT, ANONYMOUS_PREFIX + "_bind_tso.bind_mw.bind_info.mr");
    static final long BIND_MW_ADDR = offset(LAYOUT, ANONYMOUS_PREFIX + "_bind_tso.bind_mw.bind_info.addr");
    static final long BIND_MW_LENGTH = offset(LAYOUT, ANONYMOUS_PREFIX + "_bind_tso.bind_mw.bind_info.length");
    static final long BIND_MW_ACCESS = offset(LAYOUT, ANONYMOUS_PREFIX + "_bind_tso.bind_mw.bind_info.mw_access_flags");

    private IbvSendWr() {
    }
}
