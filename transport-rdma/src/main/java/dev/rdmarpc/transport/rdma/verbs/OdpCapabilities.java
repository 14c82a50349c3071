package dev.rdmarpc.transport.rdma.verbs;

/**
 * A device's on-demand paging capabilities ({@code ibv_device_attr_ex.odp_caps}): whether memory registered with
 * {@link AccessFlags#ON_DEMAND} is paged in by the device instead of being pinned, and which RC operations may touch
 * such memory.
 *
 * @param generalCaps {@code odp_caps.general_caps} ({@link #SUPPORT}, {@link #SUPPORT_IMPLICIT})
 * @param rcCaps      {@code odp_caps.per_transport_caps.rc_odp_caps} ({@link #RC_SEND} ... {@link #RC_SRQ_RECV})
 * @param queried     false when the device has no {@code ibv_query_device_ex} (nothing is reported then)
 */
public record OdpCapabilities(long generalCaps, int rcCaps, boolean queried) {
    /** {@code IBV_ODP_SUPPORT}. */
    public static final long SUPPORT = 1;
    /** {@code IBV_ODP_SUPPORT_IMPLICIT}. */
    public static final long SUPPORT_IMPLICIT = 1 << 1;
    /** {@code IBV_ODP_SUPPORT_SEND}. */
    public static final int RC_SEND = 1;
    /** {@code IBV_ODP_SUPPORT_RECV}. */
    public static final int RC_RECV = 1 << 1;
    /** {@code IBV_ODP_SUPPORT_WRITE}. */
    public static final int RC_WRITE = 1 << 2;
    /** {@code IBV_ODP_SUPPORT_READ}. */
    public static final int RC_READ = 1 << 3;
    /** {@code IBV_ODP_SUPPORT_ATOMIC}. */
    public static final int RC_ATOMIC = 1 << 4;
    /** {@code IBV_ODP_SUPPORT_SRQ_RECV}. */
    public static final int RC_SRQ_RECV = 1 << 5;

    /** What a device without {@code ibv_query_device_ex} reports: nothing. */
    public static final OdpCapabilities NONE = new OdpCapabilities(0, 0, false);

    /** Whether a peer may RDMA-READ, over RC, memory registered on demand: ODP support, with READ for RC. */
    public boolean supportsRcRemoteRead() {
        return (generalCaps & SUPPORT) != 0 && (rcCaps & RC_READ) != 0;
    }

    @Override
    public String toString() {
        if (!queried) {
            return "not reported (no ibv_query_device_ex)";
        }
        StringBuilder rc = new StringBuilder();
        String[] names = {"SEND", "RECV", "WRITE", "READ", "ATOMIC", "SRQ_RECV"};
        for (int i = 0; i < names.length; i++) {
            if ((rcCaps & (1 << i)) != 0) {
                rc.append(rc.isEmpty() ? "" : "|").append(names[i]);
            }
        }
        return "general_caps 0x" + Long.toHexString(generalCaps) + ((generalCaps & SUPPORT) != 0 ? " (ODP)" : " (no ODP)")
                + ", rc_odp_caps 0x" + Integer.toHexString(rcCaps) + (rc.isEmpty() ? "" : " (" + rc + ")");
    }
}
