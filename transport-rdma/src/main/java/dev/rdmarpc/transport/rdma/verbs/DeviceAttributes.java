package dev.rdmarpc.transport.rdma.verbs;

import static dev.rdmarpc.transport.rdma.verbs.IbvDeviceAttr.off;
import static java.lang.foreign.ValueLayout.JAVA_BYTE;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

import java.lang.foreign.MemorySegment;

/**
 * A snapshot of {@code struct ibv_device_attr} ({@code ibv_query_device}); the limits the transport sizes its
 * queues by.
 */
public record DeviceAttributes(
        String firmwareVersion,
        long maxMrSize,
        long pageSizeCap,
        int vendorId,
        int vendorPartId,
        int maxQp,
        int maxQpWr,
        int deviceCapFlags,
        int maxSge,
        int maxSgeRd,
        int maxCq,
        int maxCqe,
        int maxMr,
        int maxPd,
        int maxQpRdAtom,
        int maxQpInitRdAtom,
        int maxMw,
        int maxSrq,
        int maxSrqWr,
        int maxSrqSge,
        int physPortCount) {

    /** {@code IBV_DEVICE_MEM_WINDOW}: memory windows supported. */
    public static final int CAP_MEM_WINDOW = 1 << 17;
    /** {@code IBV_DEVICE_SRQ_RESIZE}. */
    public static final int CAP_SRQ_RESIZE = 1 << 13;
    /** {@code IBV_DEVICE_MEM_WINDOW_TYPE_2A}. */
    public static final int CAP_MEM_WINDOW_TYPE_2A = 1 << 23;
    /** {@code IBV_DEVICE_MEM_WINDOW_TYPE_2B}. */
    public static final int CAP_MEM_WINDOW_TYPE_2B = 1 << 24;
    /** {@code IBV_DEVICE_MEM_MGT_EXTENSIONS}. */
    public static final int CAP_MEM_MGT_EXTENSIONS = 1 << 21;

    static DeviceAttributes read(MemorySegment a) {
        return new DeviceAttributes(
                a.asSlice(off("fw_ver"), 64).getString(0),
                a.get(JAVA_LONG, off("max_mr_size")),
                a.get(JAVA_LONG, off("page_size_cap")),
                a.get(JAVA_INT, off("vendor_id")),
                a.get(JAVA_INT, off("vendor_part_id")),
                a.get(JAVA_INT, off("max_qp")),
                a.get(JAVA_INT, off("max_qp_wr")),
                a.get(JAVA_INT, off("device_cap_flags")),
                a.get(JAVA_INT, off("max_sge")),
                a.get(JAVA_INT, off("max_sge_rd")),
                a.get(JAVA_INT, off("max_cq")),
                a.get(JAVA_INT, off("max_cqe")),
                a.get(JAVA_INT, off("max_mr")),
                a.get(JAVA_INT, off("max_pd")),
                a.get(JAVA_INT, off("max_qp_rd_atom")),
                a.get(JAVA_INT, off("max_qp_init_rd_atom")),
                a.get(JAVA_INT, off("max_mw")),
                a.get(JAVA_INT, off("max_srq")),
                a.get(JAVA_INT, off("max_srq_wr")),
                a.get(JAVA_INT, off("max_srq_sge")),
                Byte.toUnsignedInt(a.get(JAVA_BYTE, off("phys_port_cnt"))));
    }

    /** Whether the device advertises memory windows of type 2 (2A or 2B). */
    public boolean supportsMemoryWindowType2() {
        return (deviceCapFlags & (CAP_MEM_WINDOW_TYPE_2A | CAP_MEM_WINDOW_TYPE_2B)) != 0;
    }
}
