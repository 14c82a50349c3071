package dev.rdmarpc.core.internal.connection;

import dev.rdmarpc.core.spi.ConnectionUpgrader;
import dev.rdmarpc.core.spi.TransportProvider;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.ServiceLoader;

/**
 * Finds the stream transport and the connection upgraders on the class path. Internal: public for the channel and
 * server packages and for RpcChannel, RpcServer and UpgradePolicy.
 */
public final class Transports {
    private Transports() {
    }

    /** The stream transport with the highest priority. */
    public static TransportProvider streamTransport() {
        List<TransportProvider> all = new ArrayList<>();
        ServiceLoader.load(TransportProvider.class, Transports.class.getClassLoader()).forEach(all::add);
        return all.stream().max(Comparator.comparingInt(TransportProvider::priority)).orElseThrow(() ->
                new IllegalStateException("no rdmarpc transport on the class path: add the dev.rdmarpc:transport-tcp dependency"));
    }

    /** Every connection upgrader (the RDMA transport when present). */
    public static List<ConnectionUpgrader> upgraders() {
        List<ConnectionUpgrader> all = new ArrayList<>();
        ServiceLoader.load(ConnectionUpgrader.class, Transports.class.getClassLoader()).forEach(all::add);
        return all;
    }
}
