package dev.rdmarpc.transport.rdma.verbs;

import java.lang.foreign.MemorySegment;

/** One entry of a {@link DeviceList} ({@code struct ibv_device *}); valid until the list is closed. */
public final class RdmaDevice {
    private final DeviceList owner;
    private final MemorySegment device;
    private final int index;
    private final String name;
    private final long guid;

    RdmaDevice(DeviceList owner, MemorySegment device, int index, String name, long guid) {
        this.owner = owner;
        this.device = device;
        this.index = index;
        this.name = name;
        this.guid = guid;
    }

    /** Kernel device name ({@code ibv_get_device_name}), e.g. {@code rxe0}. */
    public String name() {
        return name;
    }

    /** Node GUID ({@code ibv_get_device_guid}) as a host-order number. */
    public long guid() {
        return guid;
    }

    /** Node GUID as 16 hex digits, as {@code ibv_devices} prints it. */
    public String guidHex() {
        return String.format("%016x", guid);
    }

    /** Position in the device list. */
    public int index() {
        return index;
    }

    /** Opens the device ({@code ibv_open_device}). */
    public IbvContext open() {
        if (owner.isClosed()) {
            throw new IllegalStateException("device list already closed; open devices before closing it");
        }
        return new IbvContext(LibIbverbs.openDevice(device), name);
    }

    @Override
    public String toString() {
        return name + " (guid " + guidHex() + ")";
    }
}
