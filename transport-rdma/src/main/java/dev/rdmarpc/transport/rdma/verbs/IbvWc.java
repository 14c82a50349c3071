package dev.rdmarpc.transport.rdma.verbs;

import static dev.rdmarpc.transport.rdma.verbs.CLayouts.*;

import java.lang.foreign.StructLayout;

/** Layout of {@code struct ibv_wc} (work completion). */
final class IbvWc {
    static final StructLayout LAYOUT = struct("ibv_wc",
            u64("wr_id"),
            s32("status"),
            s32("opcode"),
            u32("vendor_err"),
            u32("byte_len"),
            union(ANONYMOUS_PREFIX + "_imm",
                    be32("imm_data"),
                    u32("invalidated_rkey")),
            u32("qp_num"),
            u32("src_qp"),
            u32("wc_flags"),
            u16("pkey_index"),
            u16("slid"),
            u8("sl"),
            u8("dlid_path_bits"));

    static final long SIZE = LAYOUT.byteSize();
    static final long WR_ID = offset(LAYOUT, "wr_id");
    static final long STATUS = offset(LAYOUT, "status");
    static final long OPCODE = offset(LAYOUT, "opcode");
    static final long VENDOR_ERR = offset(LAYOUT, "vendor_err");
    static final long BYTE_LEN = offset(LAYOUT, "byte_len");
    static final long IMM_DATA = offset(LAYOUT, ANONYMOUS_PREFIX + "_imm.imm_data");
    static final long INVALIDATED_RKEY = offset(LAYOUT, ANONYMOUS_PREFIX + "_imm.invalidated_rkey");
    static final long QP_NUM = offset(LAYOUT, "qp_num");
    static final long SRC_QP = offset(LAYOUT, "src_qp");
    static final long WC_FLAGS = offset(LAYOUT, "wc_flags");

    private IbvWc() {
    }
}
