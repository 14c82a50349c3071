package dev.rdmarpc.grpc;

import dev.rdmarpc.core.RpcServer;
import dev.rdmarpc.core.ServerMethodDefinition;
import io.grpc.InternalChannelz.SocketStats;
import io.grpc.InternalInstrumented;
import io.grpc.ServerStreamTracer;
import io.grpc.internal.InternalServer;
import io.grpc.internal.ServerListener;
import io.grpc.internal.ServerTransportListener;

import java.io.IOException;
import java.io.InputStream;
import java.net.InetSocketAddress;
import java.net.SocketAddress;
import java.util.List;
import java.util.concurrent.ConcurrentHashMap;

/**
 * grpc's view of the rdmarpc server: one {@link RpcServer} whose every method is looked up through
 * its fallback and handed to grpc's {@code ServerImpl}, which does method lookup (UNIMPLEMENTED),
 * interceptors and the application executor. rdmarpc core reports no per-connection events to a
 * fallback, so the whole server is one grpc {@link RdmaServerTransport}.
 */
final class RdmaInternalServer implements InternalServer {
    private static final int MAX_CACHED_METHODS = 4096;

    private final ServerSettings settings;
    private final List<? extends ServerStreamTracer.Factory> tracerFactories;
    private final MethodCache methods = new MethodCache();
    private final ConcurrentHashMap<String, ServerMethodDefinition<?, ?>> definitions = new ConcurrentHashMap<>();
    private RpcServer server;
    private RdmaServerTransport transport;
    private ServerListener listener;
    private volatile InetSocketAddress listenAddress;

    RdmaInternalServer(ServerSettings settings, List<? extends ServerStreamTracer.Factory> tracerFactories) {
        this.settings = settings;
        this.tracerFactories = tracerFactories;
        this.listenAddress = settings.address();
    }

    @Override
    public void start(ServerListener serverListener) throws IOException {
        this.listener = serverListener;
        RpcServer.Builder b = RpcServer.forAddress(settings.address())
                .executor(Deliveries.EXECUTOR)
                .transportMode(settings.transportMode())
                .maxInboundMessageSize(settings.maxInboundMessageSize())
                .handshakeTimeout(java.time.Duration.ofMillis(settings.handshakeTimeoutMillis()))
                .fallbackMethods(this::lookup);
        if (settings.flowControlWindow() > 0) {
            b.flowControlWindow(settings.flowControlWindow());
        }
        server = b.build();
        transport = new RdmaServerTransport(this, server, tracerFactories, settings.maxInboundMetadataSize(),
                settings.maxInboundMessageSize());
        // The transport's listener must exist before the first call can arrive.
        ServerTransportListener transportListener = serverListener.transportCreated(transport);
        transport.listener(transportListener);
        try {
            server.start();
        } catch (IOException | RuntimeException e) {
            transport.startFailed();
            throw e;
        }
        InetSocketAddress requested = settings.address();
        listenAddress = new InetSocketAddress(requested.getAddress(), server.getPort());
        transport.ready(transportListener);
    }

    /** Every method name not served natively: a pass-through definition whose calls go to grpc. */
    private ServerMethodDefinition<?, ?> lookup(String fullMethodName) {
        ServerMethodDefinition<?, ?> d = definitions.get(fullMethodName);
        if (d != null) {
            return d;
        }
        dev.rdmarpc.core.MethodDescriptor<InputStream, InputStream> m =
                methods.get(fullMethodName, settings.methodTypes().get(fullMethodName));
        d = ServerMethodDefinition.create(m, transport::startCall);
        if (definitions.size() < MAX_CACHED_METHODS) {
            definitions.put(fullMethodName, d);
        }
        return d;
    }

    @Override
    public void shutdown() {
        if (server == null) {
            return;
        }
        // Stop accepting; existing connections get GOAWAY and close once their calls are done.
        server.shutdown();
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
