package dev.rdmarpc.core;

import dev.rdmarpc.core.internal.channel.ChannelImpl;
import dev.rdmarpc.core.spi.FrameConnection;

import java.net.SocketAddress;
import java.util.concurrent.CompletableFuture;
import java.util.function.Consumer;

/**
 * One client connection to a server, for code that manages its connections itself (a transport layered on
 * rdmarpc, such as grpc-compat): its owner opens it with {@link #connect()}, hears when it closes, and shuts
 * it down then. Built with {@link RpcChannel.Builder#buildConnection()}. Thread-safe.
 *
 * <p>A call started after the connection closed or received GOAWAY, before the owner shut it down, opens a
 * new connection, as {@link RpcChannel} does.
 */
public final class RpcConnection extends ChannelHandle {
    RpcConnection(ChannelImpl impl) {
        super(impl);
    }

    /**
     * Opens the connection: the future completes once HELLO is exchanged (and the upgrade to RDMA, if any, is
     * done), or fails with a {@link StatusException} (UNAVAILABLE) naming why it could not.
     */
    public CompletableFuture<Void> connect() {
        return impl.connect();
    }

    /**
     * Sets what is told, once per connection, that the connection closed, with why (UNAVAILABLE). Set it
     * before {@link #connect()}; it runs on the thread that saw the close (possibly an I/O thread: it must not
     * block).
     */
    public void setCloseListener(Consumer<Status> listener) {
        impl.setConnectionClosedListener(listener);
    }

    /** The connection's local address, or null before it is connected. */
    public SocketAddress localAddress() {
        FrameConnection c = impl.currentConnection();
        return c == null ? null : c.localAddress();
    }

    /** "rdma" or "tcp": the transport the connection's frames travel on, or null before it is connected. */
    public String transportName() {
        FrameConnection c = impl.currentConnection();
        return c == null ? null : c.transportName();
    }

    /** The TLS session the connection runs in, or null when it is plaintext or not connected. */
    public javax.net.ssl.SSLSession sslSession() {
        FrameConnection c = impl.currentConnection();
        return c == null ? null : c.sslSession();
    }

    /**
     * A call with exactly these options: unlike {@link RpcChannel}'s, it takes nothing from the {@link CallContext} of a
     * handler it is made in (the layer that owns the connection propagates deadlines, as grpc-compat does with grpc's
     * {@code Context}).
     */
    @Override
    public <ReqT, RespT> ClientCall<ReqT, RespT> newCall(MethodDescriptor<ReqT, RespT> method, CallOptions options) {
        return impl.newCall(method, options);
    }
}
