package dev.rdmarpc.grpc;

import io.grpc.Attributes;
import io.grpc.CallOptions;
import io.grpc.ClientStreamTracer;
import io.grpc.InternalChannelz.SocketStats;
import io.grpc.InternalLogId;
import io.grpc.Metadata;
import io.grpc.MethodDescriptor;
import io.grpc.Status;
import io.grpc.internal.ClientStream;
import io.grpc.internal.ConnectionClientTransport;
import io.grpc.internal.DisconnectError;

import com.google.common.util.concurrent.ListenableFuture;

import java.util.concurrent.Executor;
import java.util.function.Supplier;

/**
 * A transport of a {@code WireProtocol.AUTO} channel: rdmarpc's connection, unless that connection finds a standard
 * gRPC server (it ends up speaking HTTP/2: the server answered HELLO with SETTINGS, or chose {@code h2} by ALPN). Then
 * the channel remembers the address and, with grpc-netty on the class path, before grpc is told the transport is ready,
 * it is handed to grpc-netty's transport to the same address: the first connection is closed, its events are no longer
 * passed on, and grpc-netty's transport reports to grpc instead. No call is lost: grpc starts none on a transport before
 * it is ready, and from before grpc-netty's transport starts, every stream goes to it. Without grpc-netty the first
 * connection stays (core's HTTP/2 bridge).
 */
final class HandoffClientTransport implements ConnectionClientTransport {
    private final RdmaClientTransport first;
    private final Supplier<ConnectionClientTransport> http2;
    private final Runnable foundHttp2;
    private final Object lock = new Object();

    private volatile ConnectionClientTransport current;
    // guarded by lock
    private boolean shutdownRequested;
    private boolean firstSilenced;

    /**
     * @param first     rdmarpc's transport, not started
     * @param http2     makes grpc-netty's transport to the same address, not started; null to keep the first
     * @param foundHttp2 told when the first connection found a gRPC server (the channel remembers the address)
     */
    HandoffClientTransport(RdmaClientTransport first, Supplier<ConnectionClientTransport> http2, Runnable foundHttp2) {
        this.first = first;
        this.http2 = http2;
        this.foundHttp2 = foundHttp2;
        this.current = first;
    }

    @Override
    public Runnable start(Listener listener) {
        return first.start(new FirstListener(listener));
    }

    /** Passes the first transport's events on until it is handed off; hands it off instead of reporting it ready. */
    private final class FirstListener implements Listener {
        private final Listener grpc;

        FirstListener(Listener grpc) {
            this.grpc = grpc;
        }

        @Override
        public void transportReady() {
            boolean speaksHttp2 = first.speaksHttp2();
            if (speaksHttp2) {
                foundHttp2.run();
            }
            Runnable startNext = null;
            boolean handOff;
            synchronized (lock) {
                handOff = speaksHttp2 && http2 != null && !shutdownRequested;
                if (handOff) {
                    ConnectionClientTransport next = http2.get();
                    // streams go to grpc-netty's transport before it starts: it connects from start(), on its event
                    // loop, and may tell grpc it is ready (grpc then starts the waiting calls) before start() returns
                    current = next;
                    firstSilenced = true;
                    startNext = next.start(grpc);
                }
            }
            if (!handOff) {
                grpc.transportReady();
                return;
            }
            first.shutdownNow(Status.UNAVAILABLE.withDescription("the connection found a gRPC-over-HTTP/2 server and "
                    + "was handed to grpc-netty's transport"));
            if (startNext != null) {
                startNext.run();
            }
        }

        @Override
        public void transportShutdown(Status s, DisconnectError e) {
            if (!isSilenced()) {
                grpc.transportShutdown(s, e);
            }
        }

        @Override
        public void transportTerminated() {
            if (!isSilenced()) {
                grpc.transportTerminated();
            }
        }

        @Override
        public void transportInUse(boolean inUse) {
            if (!isSilenced()) {
                grpc.transportInUse(inUse);
            }
        }

        @Override
        public Attributes filterTransport(Attributes attributes) {
            return grpc.filterTransport(attributes);
        }
    }

    private boolean isSilenced() {
        synchronized (lock) {
            return firstSilenced;
        }
    }

    @Override
    public void shutdown(Status reason) {
        shuttingDown().shutdown(reason);
    }

    @Override
    public void shutdownNow(Status reason) {
        shuttingDown().shutdownNow(reason);
    }

    /** Records that grpc asked for shutdown (no hand-off after it) and returns the transport to pass it to. */
    private ConnectionClientTransport shuttingDown() {
        synchronized (lock) {
            shutdownRequested = true;
            return current;
        }
    }

    @Override
    public ClientStream newStream(MethodDescriptor<?, ?> method, Metadata headers, CallOptions callOptions,
                                  ClientStreamTracer[] tracers) {
        return current.newStream(method, headers, callOptions, tracers);
    }

    @Override
    public void ping(PingCallback callback, Executor executor) {
        current.ping(callback, executor);
    }

    @Override
    public Attributes getAttributes() {
        return current.getAttributes();
    }

    @Override
    public ListenableFuture<SocketStats> getStats() {
        return current.getStats();
    }

    @Override
    public InternalLogId getLogId() {
        return first.getLogId();
    }
}
