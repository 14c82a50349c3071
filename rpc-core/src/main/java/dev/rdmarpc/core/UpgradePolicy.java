package dev.rdmarpc.core;

import dev.rdmarpc.core.internal.connection.Transports;
import dev.rdmarpc.core.spi.ConnectionUpgrader;

import java.util.List;

/** Which connection upgraders a channel or server consults, given its transport mode and TLS settings. */
final class UpgradePolicy {
    private UpgradePolicy() {
    }

    /**
     * The upgraders to offer or accept: none for {@link TransportMode#TCP}, none for TLS unless
     * {@link RdmaUnderTls#AUTHENTICATE_ONLY}; all found otherwise, each told the RDMA device choice when there is one.
     *
     * @throws IllegalStateException when RDMA is required under TLS without allowing it, or the TLS config is for the
     *                               other side
     */
    static List<ConnectionUpgrader> upgraders(TransportMode mode, TlsConfig tls, RdmaUnderTls underTls, boolean server,
                                              RdmaDeviceChoice device) {
        if (tls != null && tls.isServer() != server) {
            throw new IllegalStateException(server
                    ? "the server was given a client TLS configuration (use TlsConfig.forServer)"
                    : "the channel was given a server TLS configuration (use TlsConfig.forClient)");
        }
        boolean tlsKeepsTcp = tls != null && underTls == RdmaUnderTls.NEVER;
        if (mode == TransportMode.RDMA && tlsKeepsTcp) {
            throw new IllegalStateException("transportMode(RDMA) with TLS needs rdmaUnderTls(AUTHENTICATE_ONLY): "
                    + "RDMA does not encrypt, so a TLS connection stays on TCP unless told otherwise");
        }
        if (mode == TransportMode.TCP || tlsKeepsTcp) {
            return List.of();
        }
        List<ConnectionUpgrader> all = Transports.upgraders();
        return device == null ? all : all.stream().map(u -> u.withDevice(device)).toList();
    }
}
