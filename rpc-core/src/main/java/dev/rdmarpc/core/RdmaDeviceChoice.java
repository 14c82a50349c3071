package dev.rdmarpc.core;

import java.util.Objects;

/**
 * Which RDMA device, port and GID a channel's or server's connections use, overriding the choice the RDMA transport
 * makes from each connection's local address (and the {@code rdmarpc.rdma.device}, {@code .port} and
 * {@code .gidIndex} system properties). Unset parts keep the automatic choice.
 *
 * @param device   the device name (e.g. "mlx5_0", "rxe0"), or null to choose by the connection's local address
 * @param port     the port number, or 0 for the device's first active port
 * @param gidIndex the GID table index, or -1 for the entry that maps the connection's local address
 */
public record RdmaDeviceChoice(String device, int port, int gidIndex) {
    /** Checks the ranges. */
    public RdmaDeviceChoice {
        if (device != null && device.isBlank()) {
            throw new IllegalArgumentException("the RDMA device name is blank");
        }
        if (port < 0 || port > 255) {
            throw new IllegalArgumentException("the RDMA port must be in [0, 255] (0: the first active one): " + port);
        }
        if (gidIndex < -1) {
            throw new IllegalArgumentException("the GID index must be -1 (automatic) or an index: " + gidIndex);
        }
    }

    /** The named device, its first active port and the GID that maps the connection's local address. */
    public static RdmaDeviceChoice named(String device) {
        return new RdmaDeviceChoice(Objects.requireNonNull(device, "device"), 0, -1);
    }

    /** This choice with an explicit GID index. */
    public RdmaDeviceChoice withGidIndex(int index) {
        return new RdmaDeviceChoice(device, port, index);
    }

    /** This choice with an explicit port. */
    public RdmaDeviceChoice withPort(int number) {
        return new RdmaDeviceChoice(device, number, gidIndex);
    }
}
