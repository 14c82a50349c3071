package dev.rdmarpc.transport.rdma.verbs;

/**
 * Entry point of the verbs binding: is libibverbs usable here, and which RDMA devices exist.
 * <p>Nothing here throws for "no RDMA on this machine": {@link #deviceList()} then answers an empty list with a
 * reason, and the transport falls back to TCP.
 */
public final class Verbs {
    private Verbs() {
    }

    /** Whether libibverbs.so.1 loaded with every symbol the binding needs. */
    public static boolean isAvailable() {
        return LibIbverbs.unavailableReason() == null;
    }

    /** Why libibverbs cannot be used (e.g. {@code libibverbs.so.1 not found: apt-get install ...}), or null. */
    public static String unavailableReason() {
        return LibIbverbs.unavailableReason();
    }

    /**
     * Lists the RDMA devices ({@code ibv_get_device_list}). The list must be closed; devices opened from it stay
     * open after it is closed.
     * <p>Empty, with {@link DeviceList#emptyReason()} set, when libibverbs is missing, when the kernel has no RDMA
     * support ({@code ENOSYS}) or when no device is configured.
     *
     * @throws VerbsException if the list cannot be read for another reason (e.g. EPERM)
     */
    public static DeviceList deviceList() {
        String unavailable = LibIbverbs.unavailableReason();
        if (unavailable != null) {
            return DeviceList.empty(unavailable);
        }
        LibIbverbs.DeviceListResult result = LibIbverbs.getDeviceList();
        if (result.list().address() == 0) {
            if (result.errno() == Errno.ENOSYS) {
                return DeviceList.empty("no RDMA support in this kernel (ibv_get_device_list: "
                        + Errno.describe(Errno.ENOSYS) + ")");
            }
            throw new VerbsException("ibv_get_device_list", result.errno());
        }
        return DeviceList.of(result.list(), result.count());
    }
}
