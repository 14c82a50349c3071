package dev.rdmarpc.grpc;

import dev.rdmarpc.core.PeerConnection;
import dev.rdmarpc.core.PeerConnectionListener;
import dev.rdmarpc.core.RpcServer;
import dev.rdmarpc.core.ServerCall;
import dev.rdmarpc.core.ServerMethodDefinition;
import io.grpc.InternalChannelz.SocketStats;
import io.grpc.InternalInstrumented;
import io.grpc.ServerStreamTracer;
import io.grpc.internal.InternalServer;
import io.grpc.internal.ServerListener;

import java.io.IOException;
import java.io.InputStream;
import java.net.InetSocketAddress;
import java.net.SocketAddress;
import java.util.List;
import java.util.concurrent.ConcurrentHashMap;

/**
 * grpc's view of the rdmarpc server: one {@link RpcServer} whose every method is looked up through
 * its fallback and handed to grpc's {@code ServerImpl}, which does method lookup (UNIMPLEMENTED),
 * interceptors and the application executor. Each client connection is one grpc
 * {@link RdmaServerTransport}, created when core reports the connection open and terminated when
 * it reports it closed; each call goes to its connection's transport.
 */
final class RdmaInternalServer implements InternalServer, PeerConnectionListener {
    private static final int MAX_CACHED_METHODS = 4096;

    private final ServerSettings settings;
    private final List<? extends ServerStreamTracer.Factory> tracerFactories;
    private final MethodCache methods = new MethodCache();
    private final ConcurrentHashMap<String, ServerMethodDefinition<?, ?>> definitions = new ConcurrentHashMap<>();
    private final ConcurrentHashMap<PeerConnection, RdmaServerTransport> transports = new ConcurrentHashMap<>();
    private RpcServer server;
    private volatile ServerListener listener;
    private volatile boolean shutdown;
    private volatile InetSocketAddress listenAddress;

    RdmaInternalServer(ServerSettings settings, List<? extends ServerStreamTracer.Factory> tracerFactories) {
        this.settings = settings;
        this.tracerFactories = tracerFactories;
        this.listenAddress = settings.address();
    }

    @Override
    public void start(ServerListener serverListener) throws IOException {
        // Set before the server listens: the first connection finds it.
        this.listener = serverListener;
        RpcServer.Builder b = RpcServer.forAddress(settings.address())
                .executor(Deliveries.EXECUTOR)
                .transportMode(settings.transportMode())
                .maxInboundMessageSize(settings.maxInboundMessageSize())
                .maxInboundMetadataSize(settings.maxInboundMetadataSize())
                .maxConcurrentCallsPerConnection(settings.maxConcurrentCallsPerConnection())
                .handshakeTimeout(java.time.Duration.ofMillis(settings.handshakeTimeoutMillis()))
                .fallbackMethods(this::lookup)
                .connectionListener(this)
                .grpcOverHttp2(settings.grpcOverHttp2())
                // grpc's own server keepalive runs per transport (KeepAliveManager on PeerConnection.ping()) with the
                // builder's keepAliveTime/keepAliveTimeout; core's would PING the same connections a second time
                .keepAliveTime(java.time.Duration.ZERO);
        if (settings.flowControlWindow() > 0) {
            b.flowControlWindow(settings.flowControlWindow());
        }
        if (settings.tls() != null) {
            b.tls(settings.tls()).rdmaUnderTls(settings.rdmaUnderTls());
        }
        if (settings.rdmaDevice() != null) {
            b.rdmaDevice(settings.rdmaDevice());
        }
        server = b.build();
        server.start();
        InetSocketAddress requested = settings.address();
        listenAddress = new InetSocketAddress(requested.getAddress(), server.getPort());
    }

    /** A client connected (core's I/O thread, before any of its calls): a new grpc transport, ready at once. */
    @Override
    public void connectionOpened(PeerConnection connection) {
        RdmaServerTransport t = new RdmaServerTransport(this, connection, tracerFactories, settings);
        transports.put(connection, t);
        t.start(listener);
        if (shutdown) {
            // opened while the server was shutting down: grpc's ServerImpl may not have seen it
            t.shutdown();
        }
    }

    /** The connection closed: its transport terminates once its streams are closed. */
    @Override
    public void connectionClosed(PeerConnection connection, String reason) {
        RdmaServerTransport t = transports.remove(connection);
        if (t != null) {
            t.connectionClosed(reason);
        }
    }

    /** The client pinged (core answered): its transport checks the client keeps to permitKeepAliveTime. */
    @Override
    public void pingReceived(PeerConnection connection) {
        RdmaServerTransport t = transports.get(connection);
        if (t != null) {
            t.pingReceived();
        }
    }

    /** Every method name not served natively: a pass-through definition whose calls go to grpc. */
    private ServerMethodDefinition<?, ?> lookup(String fullMethodName) {
        ServerMethodDefinition<?, ?> d = definitions.get(fullMethodName);
        if (d != null) {
            return d;
        }
        dev.rdmarpc.core.MethodDescriptor<InputStream, InputStream> m =
                methods.get(fullMethodName, settings.methodTypes().get(fullMethodName));
        d = ServerMethodDefinition.create(m, this::startCall);
        if (definitions.size() < MAX_CACHED_METHODS) {
            definitions.put(fullMethodName, d);
        }
        return d;
    }

    /** A call: to the grpc transport of the connection it arrived on. */
    private ServerCall.Listener<InputStream> startCall(ServerCall<InputStream, InputStream> call, dev.rdmarpc.core.Metadata headers) {
        PeerConnection c = call.getConnection();
        RdmaServerTransport t = c == null ? null : transports.get(c);
        if (t == null) {
            call.close(dev.rdmarpc.core.Status.UNAVAILABLE.withDescription("the call's connection is not open"), null);
            return new ServerCall.Listener<>() {
            };
        }
        return t.startCall(call, headers);
    }

    @Override
    public void shutdown() {
        if (server == null) {
            return;
        }
        shutdown = true;
        // Stop accepting; core sends GOAWAY on every connection, each closes once its calls are done.
        server.shutdown();
        for (RdmaServerTransport t : transports.values()) {
            t.goAwaySentByServer();
        }
        listener.serverShutdown();
    }

    @Override
    public SocketAddress getListenSocketAddress() {
        return listenAddress;
    }

    @Override
    public InternalInstrumented<SocketStats> getListenSocketStats() {
        return null;
    }

    @Override
    public List<? extends SocketAddress> getListenSocketAddresses() {
        return List.of(listenAddress);
    }

    @Override
    public List<InternalInstrumented<SocketStats>> getListenSocketStatsList() {
        return List.of();
    }

    InetSocketAddress listenAddress() {
        return listenAddress;
    }

    @Override
    public String toString() {
        return "RdmaInternalServer{" + listenAddress + "}";
    }
}
