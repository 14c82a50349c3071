package dev.rdmarpc.transport.rdma.verbs;

import static java.lang.foreign.ValueLayout.ADDRESS;

import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/** The result of {@code ibv_get_device_list}: the devices, or why there are none; close it to free the list. */
public final class DeviceList implements AutoCloseable {
    private final MemorySegment list;
    private final List<RdmaDevice> devices;
    private final String emptyReason;
    private boolean closed;

    private DeviceList(MemorySegment list, List<RdmaDevice> devices, String emptyReason) {
        this.list = list;
        this.devices = devices;
        this.emptyReason = emptyReason;
    }

    static DeviceList empty(String reason) {
        return new DeviceList(MemorySegment.NULL, List.of(), reason);
    }

    static DeviceList of(MemorySegment list, int count) {
        List<RdmaDevice> devices = new ArrayList<>(count);
        DeviceList result = new DeviceList(list, devices, count == 0
                ? "no RDMA device is configured (ibv_get_device_list returned none; install ibverbs-providers, "
                + "or create a Soft-RoCE device: rdma link add rxe0 type rxe netdev <interface>)"
                : null);
        for (int i = 0; i < count; i++) {
            MemorySegment device = list.getAtIndex(ADDRESS, i);
            devices.add(new RdmaDevice(result, device, i, LibIbverbs.deviceName(device), LibIbverbs.deviceGuid(device)));
        }
        return result;
    }

    /** The devices, in the library's order. */
    public List<RdmaDevice> devices() {
        return List.copyOf(devices);
    }

    /** Number of devices. */
    public int size() {
        return devices.size();
    }

    /** Whether there is no device. */
    public boolean isEmpty() {
        return devices.isEmpty();
    }

    /** The device at {@code index}. */
    public RdmaDevice get(int index) {
        return devices.get(index);
    }

    /** The device with the kernel name {@code name} (e.g. {@code rxe0}, {@code mlx5_0}). */
    public Optional<RdmaDevice> find(String name) {
        for (RdmaDevice d : devices) {
            if (d.name().equals(name)) {
                return Optional.of(d);
            }
        }
        return Optional.empty();
    }

    /** Why the list is empty (no library, no kernel RDMA, no device), or null if it is not. */
    public String emptyReason() {
        return emptyReason;
    }

    boolean isClosed() {
        return closed;
    }

    /** Frees the list ({@code ibv_free_device_list}); contexts opened from it stay valid. */
    @Override
    public void close() {
        if (!closed) {
            closed = true;
            if (list.address() != 0) {
                LibIbverbs.freeDeviceList(list);
            }
        }
    }

    @Override
    public String toString() {
        return devices.isEmpty() ? "DeviceList[empty: " + emptyReason + "]" : "DeviceList" + devices;
    }
}
