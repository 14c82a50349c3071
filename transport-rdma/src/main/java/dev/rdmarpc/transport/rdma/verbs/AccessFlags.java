package dev.rdmarpc.transport.rdma.verbs;

/** {@code enum ibv_access_flags}: what a memory region, window or QP allows. */
public final class AccessFlags {
    /** {@code IBV_ACCESS_LOCAL_WRITE}: the HCA may write (needed for receive buffers and RDMA READ targets). */
    public static final int LOCAL_WRITE = 1;
    /** {@code IBV_ACCESS_REMOTE_WRITE} (needs LOCAL_WRITE). */
    public static final int REMOTE_WRITE = 1 << 1;
    /** {@code IBV_ACCESS_REMOTE_READ}. */
    public static final int REMOTE_READ = 1 << 2;
    /** {@code IBV_ACCESS_REMOTE_ATOMIC} (needs LOCAL_WRITE). */
    public static final int REMOTE_ATOMIC = 1 << 3;
    /** {@code IBV_ACCESS_MW_BIND}: memory windows may be bound to the region. */
    public static final int MW_BIND = 1 << 4;
    /** {@code IBV_ACCESS_ZERO_BASED}. */
    public static final int ZERO_BASED = 1 << 5;
    /** {@code IBV_ACCESS_ON_DEMAND} (ODP). */
    public static final int ON_DEMAND = 1 << 6;
    /** {@code IBV_ACCESS_HUGETLB}. */
    public static final int HUGETLB = 1 << 7;
    /** {@code IBV_ACCESS_RELAXED_ORDERING} (optional: ignored by devices without it). */
    public static final int RELAXED_ORDERING = 1 << 20;

    private AccessFlags() {
    }

    /** {@code "LOCAL_WRITE|REMOTE_READ"}-style rendering. */
    public static String describe(int flags) {
        StringBuilder sb = new StringBuilder();
        String[] names = {"LOCAL_WRITE", "REMOTE_WRITE", "REMOTE_READ", "REMOTE_ATOMIC", "MW_BIND", "ZERO_BASED",
                "ON_DEMAND", "HUGETLB"};
        for (int i = 0; i < names.length; i++) {
            if ((flags & (1 << i)) != 0) {
                sb.append(sb.isEmpty() ? "" : "|").append(names[i]);
            }
        }
        if ((flags & RELAXED_ORDERING) != 0) {
            sb.append(sb.isEmpty() ? "" : "|").append("RELAXED_ORDERING");
        }
        return sb.isEmpty() ? "0" : sb.toString();
    }
}
