package dev.rdmarpc.transport.rdma.verbs;

import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

import java.lang.foreign.MemorySegment;

/** Flyweight over one {@code struct ibv_wc}; {@link #wrap} moves it, nothing allocates. */
public final class WorkCompletion {
    /** Size of {@code struct ibv_wc}. */
    public static final int SIZE = (int) IbvWc.SIZE;

    // enum ibv_wc_status
    /** {@code IBV_WC_SUCCESS}. */
    public static final int STATUS_SUCCESS = 0;
    /** {@code IBV_WC_LOC_LEN_ERR}. */
    public static final int STATUS_LOC_LEN_ERR = 1;
    /** {@code IBV_WC_LOC_QP_OP_ERR}. */
    public static final int STATUS_LOC_QP_OP_ERR = 2;
    /** {@code IBV_WC_LOC_PROT_ERR}. */
    public static final int STATUS_LOC_PROT_ERR = 4;
    /** {@code IBV_WC_WR_FLUSH_ERR}: the QP was in error; the WR never ran. */
    public static final int STATUS_WR_FLUSH_ERR = 5;
    /** {@code IBV_WC_MW_BIND_ERR}. */
    public static final int STATUS_MW_BIND_ERR = 6;
    /** {@code IBV_WC_REM_INV_REQ_ERR}. */
    public static final int STATUS_REM_INV_REQ_ERR = 9;
    /** {@code IBV_WC_REM_ACCESS_ERR}: bad rkey/range/rights at the peer. */
    public static final int STATUS_REM_ACCESS_ERR = 10;
    /** {@code IBV_WC_REM_OP_ERR}. */
    public static final int STATUS_REM_OP_ERR = 11;
    /** {@code IBV_WC_RETRY_EXC_ERR}: transport retries exhausted (no peer answered). */
    public static final int STATUS_RETRY_EXC_ERR = 12;
    /** {@code IBV_WC_RNR_RETRY_EXC_ERR}: the peer had no receive posted, RNR retries exhausted. */
    public static final int STATUS_RNR_RETRY_EXC_ERR = 13;
    /** {@code IBV_WC_FATAL_ERR}. */
    public static final int STATUS_FATAL_ERR = 19;
    /** {@code IBV_WC_GENERAL_ERR}. */
    public static final int STATUS_GENERAL_ERR = 21;

    // enum ibv_wc_opcode
    /** {@code IBV_WC_SEND}. */
    public static final int OPCODE_SEND = 0;
    /** {@code IBV_WC_RDMA_WRITE}. */
    public static final int OPCODE_RDMA_WRITE = 1;
    /** {@code IBV_WC_RDMA_READ}. */
    public static final int OPCODE_RDMA_READ = 2;
    /** {@code IBV_WC_COMP_SWAP}. */
    public static final int OPCODE_COMP_SWAP = 3;
    /** {@code IBV_WC_FETCH_ADD}. */
    public static final int OPCODE_FETCH_ADD = 4;
    /** {@code IBV_WC_BIND_MW}. */
    public static final int OPCODE_BIND_MW = 5;
    /** {@code IBV_WC_LOCAL_INV}. */
    public static final int OPCODE_LOCAL_INV = 6;
    /** {@code IBV_WC_RECV}: also the bit all receive opcodes have. */
    public static final int OPCODE_RECV = 1 << 7;
    /** {@code IBV_WC_RECV_RDMA_WITH_IMM}. */
    public static final int OPCODE_RECV_RDMA_WITH_IMM = OPCODE_RECV + 1;

    // enum ibv_wc_flags
    /** {@code IBV_WC_GRH}: a GRH is in the first 40 bytes of the receive buffer (UD only). */
    public static final int FLAG_GRH = 1;
    /** {@code IBV_WC_WITH_IMM}: {@link #immData()} is valid. */
    public static final int FLAG_WITH_IMM = 1 << 1;
    /** {@code IBV_WC_WITH_INV}: {@link #invalidatedRkey()} is valid. */
    public static final int FLAG_WITH_INV = 1 << 3;

    private static final String[] STATUS_NAMES = {
            "IBV_WC_SUCCESS", "IBV_WC_LOC_LEN_ERR", "IBV_WC_LOC_QP_OP_ERR", "IBV_WC_LOC_EEC_OP_ERR",
            "IBV_WC_LOC_PROT_ERR", "IBV_WC_WR_FLUSH_ERR", "IBV_WC_MW_BIND_ERR", "IBV_WC_BAD_RESP_ERR",
            "IBV_WC_LOC_ACCESS_ERR", "IBV_WC_REM_INV_REQ_ERR", "IBV_WC_REM_ACCESS_ERR", "IBV_WC_REM_OP_ERR",
            "IBV_WC_RETRY_EXC_ERR", "IBV_WC_RNR_RETRY_EXC_ERR", "IBV_WC_LOC_RDD_VIOL_ERR",
            "IBV_WC_REM_INV_RD_REQ_ERR", "IBV_WC_REM_ABORT_ERR", "IBV_WC_INV_EECN_ERR",
            "IBV_WC_INV_EEC_STATE_ERR", "IBV_WC_FATAL_ERR", "IBV_WC_RESP_TIMEOUT_ERR", "IBV_WC_GENERAL_ERR",
            "IBV_WC_TM_ERR", "IBV_WC_TM_RNDV_INCOMPLETE"};

    private MemorySegment segment = MemorySegment.NULL;
    private long offset;

    /** Points the flyweight at the {@code ibv_wc} at {@code offset} in {@code segment}. */
    public WorkCompletion wrap(MemorySegment segment, long offset) {
        this.segment = segment;
        this.offset = offset;
        return this;
    }

    /** {@code wr_id} of the completed work request. */
    public long wrId() {
        return segment.get(JAVA_LONG, offset + IbvWc.WR_ID);
    }

    /** {@code status}, one of the {@code STATUS_*} constants. */
    public int status() {
        return segment.get(JAVA_INT, offset + IbvWc.STATUS);
    }

    /** Whether {@code status == IBV_WC_SUCCESS}. */
    public boolean isSuccess() {
        return status() == STATUS_SUCCESS;
    }

    /** {@code opcode}, one of the {@code OPCODE_*} constants (valid for successful completions). */
    public int opcode() {
        return segment.get(JAVA_INT, offset + IbvWc.OPCODE);
    }

    /** Vendor error syndrome. */
    public int vendorError() {
        return segment.get(JAVA_INT, offset + IbvWc.VENDOR_ERR);
    }

    /** Bytes received (receive completions) or read (RDMA READ). */
    public int byteLength() {
        return segment.get(JAVA_INT, offset + IbvWc.BYTE_LEN);
    }

    /** Immediate data in host order (the wire carries it big-endian); valid when {@link #FLAG_WITH_IMM} is set. */
    public int immData() {
        return segment.get(CLayouts.BE32, offset + IbvWc.IMM_DATA);
    }

    /** The invalidated rkey; valid when {@link #FLAG_WITH_INV} is set. */
    public int invalidatedRkey() {
        return segment.get(JAVA_INT, offset + IbvWc.INVALIDATED_RKEY);
    }

    /** Local QP number the completion belongs to. */
    public int qpNum() {
        return segment.get(JAVA_INT, offset + IbvWc.QP_NUM);
    }

    /** Remote QP number (UD only). */
    public int srcQp() {
        return segment.get(JAVA_INT, offset + IbvWc.SRC_QP);
    }

    /** {@code wc_flags}: {@code FLAG_*} bits. */
    public int flags() {
        return segment.get(JAVA_INT, offset + IbvWc.WC_FLAGS);
    }

    /** Whether the completion carries immediate data. */
    public boolean hasImmData() {
        return (flags() & FLAG_WITH_IMM) != 0;
    }

    /** The name of a work completion status, e.g. {@code IBV_WC_RETRY_EXC_ERR}. */
    public static String statusName(int status) {
        return status >= 0 && status < STATUS_NAMES.length ? STATUS_NAMES[status] : "IBV_WC_STATUS_" + status;
    }

    /** The name of a work completion opcode, e.g. {@code IBV_WC_RECV}. */
    public static String opcodeName(int opcode) {
        return switch (opcode) {
            case OPCODE_SEND -> "IBV_WC_SEND";
            case OPCODE_RDMA_WRITE -> "IBV_WC_RDMA_WRITE";
            case OPCODE_RDMA_READ -> "IBV_WC_RDMA_READ";
            case OPCODE_COMP_SWAP -> "IBV_WC_COMP_SWAP";
            case OPCODE_FETCH_ADD -> "IBV_WC_FETCH_ADD";
            case OPCODE_BIND_MW -> "IBV_WC_BIND_MW";
            case OPCODE_LOCAL_INV -> "IBV_WC_LOCAL_INV";
            case OPCODE_RECV -> "IBV_WC_RECV";
            case OPCODE_RECV_RDMA_WITH_IMM -> "IBV_WC_RECV_RDMA_WITH_IMM";
            default -> "IBV_WC_OPCODE_" + opcode;
        };
    }

    /** A readable one-line rendering (allocates; for logs and errors). */
    public String describe() {
        StringBuilder sb = new StringBuilder("wc[wr_id ").append(wrId()).append(", ").append(statusName(status()));
        if (isSuccess()) {
            sb.append(", ").append(opcodeName(opcode())).append(", byte_len ").append(Integer.toUnsignedString(byteLength()));
            if (hasImmData()) {
                sb.append(", imm 0x").append(Integer.toHexString(immData()));
            }
        } else {
            sb.append(" (").append(status()).append("), vendor_err 0x").append(Integer.toHexString(vendorError()));
        }
        return sb.append(", qp_num ").append(qpNum()).append(']').toString();
    }

    @Override
    public String toString() {
        return segment.address() == 0 ? "wc[unwrapped]" : describe();
    }
}
