package dev.rdmarpc.transport.rdma.verbs;

/** {@code enum ibv_qp_state}: the states of a queue pair. */
public final class QpState {
    /** {@code IBV_QPS_RESET}. */
    public static final int RESET = 0;
    /** {@code IBV_QPS_INIT}. */
    public static final int INIT = 1;
    /** {@code IBV_QPS_RTR}: ready to receive. */
    public static final int RTR = 2;
    /** {@code IBV_QPS_RTS}: ready to send. */
    public static final int RTS = 3;
    /** {@code IBV_QPS_SQD}. */
    public static final int SQD = 4;
    /** {@code IBV_QPS_SQE}. */
    public static final int SQE = 5;
    /** {@code IBV_QPS_ERR}. */
    public static final int ERR = 6;
    /** {@code IBV_QPS_UNKNOWN}. */
    public static final int UNKNOWN = 7;

    private static final String[] NAMES = {"RESET", "INIT", "RTR", "RTS", "SQD", "SQE", "ERR", "UNKNOWN"};

    private QpState() {
    }

    /** The short name of a state, e.g. {@code RTS}. */
    public static String name(int state) {
        return state >= 0 && state < NAMES.length ? NAMES[state] : "STATE_" + state;
    }
}
