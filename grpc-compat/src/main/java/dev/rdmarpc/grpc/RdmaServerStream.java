package dev.rdmarpc.grpc;

import dev.rdmarpc.core.ServerCall;
import io.grpc.Attributes;
import io.grpc.Codec;
import io.grpc.Compressor;
import io.grpc.Decompressor;
import io.grpc.Metadata;
import io.grpc.Status;
import io.grpc.StatusException;
import io.grpc.internal.GrpcUtil;
import io.grpc.internal.ServerStream;
import io.grpc.internal.ServerStreamListener;
import io.grpc.internal.StatsTraceContext;

import java.io.IOException;
import java.io.InputStream;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;

/**
 * A grpc server stream carried by one rdmarpc {@link ServerCall}: grpc's ServerImpl drives it, and
 * the rdmarpc call's callbacks (one at a time, see {@link Deliveries}) become stream-listener calls.
 */
final class RdmaServerStream implements ServerStream {
    private static final VarHandle LISTENER_CLOSED;

    static {
        try {
            LISTENER_CLOSED = MethodHandles.lookup().findVarHandle(RdmaServerStream.class, "listenerClosed", boolean.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    private final RdmaServerTransport transport;
    private final ServerCall<InputStream, InputStream> call;
    private final StatsTraceContext stats;
    /** Set once, by the first {@link #closeListener}. */
    private volatile boolean listenerClosed;
    private final CallListener callListener = new CallListener();

    private volatile ServerStreamListener listener;
    private volatile Status closeStatus;
    private volatile Status cancelStatus;
    private volatile Compressor compressor = Codec.Identity.NONE;
    private volatile boolean messageCompression = true;
    /** The request's decompressor, from its grpc-encoding header (grpc's ServerImpl sets it); null while identity. */
    private volatile Decompressor decompressor;
    private int outboundSeqNo;
    private int inboundSeqNo;

    RdmaServerStream(RdmaServerTransport transport, ServerCall<InputStream, InputStream> call, StatsTraceContext stats) {
        this.transport = transport;
        this.call = call;
        this.stats = stats;
    }

    ServerCall.Listener<InputStream> callListener() {
        return callListener;
    }

    @Override
    public void setListener(ServerStreamListener serverStreamListener) {
        this.listener = serverStreamListener;
    }

    @Override
    public void request(int numMessages) {
        call.request(numMessages);
    }

    @Override
    public void writeHeaders(Metadata headers, boolean flush) {
        dev.rdmarpc.core.Metadata md;
        try {
            md = Headers.toCore(headers, Headers.RESPONSE_EXCLUDED);
        } catch (IllegalArgumentException e) {
            cancel(Status.INTERNAL.withDescription("response headers cannot be sent: " + e.getMessage()));
            return;
        }
        transport.responseSent();
        try {
            call.sendHeaders(md);
        } catch (IllegalStateException e) {
            // the call was already closed (cancelled): nothing to send
        }
    }

    @Override
    public void writeMessage(InputStream message) {
        try {
            InputStream m = StreamMarshaller.withKnownLength(message);
            int size = m.available();
            int seq = outboundSeqNo++;
            stats.outboundMessage(seq);
            int wireSize = size;
            if (Compression.compresses(compressor, messageCompression)) {
                m = Compression.compress(compressor, m);
                wireSize = m.available();
            }
            transport.responseSent();
            call.sendMessage(m);
            stats.outboundWireSize(wireSize);
            stats.outboundUncompressedSize(size);
            stats.outboundMessageSent(seq, wireSize, size);
        } catch (IOException e) {
            throw Status.INTERNAL.withDescription("cannot read the response to send").withCause(e).asRuntimeException();
        } finally {
            GrpcUtil.closeQuietly(message);
        }
    }

    @Override
    public void flush() {
        // rdmarpc flushes each message of a server-streaming call as it is sent.
    }

    @Override
    public boolean isReady() {
        return call.isReady();
    }

    @Override
    public void close(Status status, Metadata trailers) {
        closeStatus = status;
        dev.rdmarpc.core.Status s = Statuses.toCore(status);
        dev.rdmarpc.core.Metadata md;
        try {
            md = Headers.toCoreOrNull(trailers, Headers.RESPONSE_EXCLUDED);
        } catch (IllegalArgumentException e) {
            s = dev.rdmarpc.core.Status.INTERNAL.withDescription("response trailers cannot be sent: " + e.getMessage());
            md = null;
        }
        if (!listenerClosed) {
            // The stream's stats end here, before the trailers can reach the client (grpc-netty ends them when the
            // trailers are written, before it reads the connection's next request); otherwise a client's next call
            // could start on the server before this one's stats end. Only the first streamClosed counts.
            stats.streamClosed(status);
        }
        try {
            call.close(s, md);
        } catch (IllegalStateException e) {
            // already closed by a cancel
        }
    }

    /** grpc's transports tell a new stream it is ready once it exists; rdmarpc only reports changes. */
    void signalInitialReadiness() {
        ServerStreamListener l = listener;
        if (l != null && call.isReady() && !listenerClosed) {
            l.onReady();
        }
    }

    @Override
    public void cancel(Status status) {
        if (cancelStatus == null) {
            cancelStatus = status;
        }
        // As grpc's HTTP/2 transports reset a cancelled stream, the client sees CANCELLED.
        try {
            call.close(dev.rdmarpc.core.Status.CANCELLED.withDescription("the server cancelled the call ("
                    + status.getCode() + (status.getDescription() != null ? ": " + status.getDescription() : "") + ")"), null);
        } catch (IllegalStateException e) {
            // already closed
        }
    }

    /** grpc's ServerImpl sets the decompressor named by the request's grpc-encoding. */
    @Override
    public void setDecompressor(Decompressor decompressor) {
        this.decompressor = decompressor == Codec.Identity.NONE ? null : decompressor;
    }

    /** grpc's ServerCallImpl sets the response compressor when it sends headers (identity unless the client accepts it). */
    @Override
    public void setCompressor(Compressor compressor) {
        this.compressor = compressor;
    }

    @Override
    public void setMessageCompression(boolean enable) {
        this.messageCompression = enable;
    }

    /**
     * A received message cannot be read (as grpc's deframer failing): grpc is told the call closed
     * with the status and the client gets it in TRAILERS, as grpc-netty's server does.
     */
    private void inboundFailed(Status status) {
        closeListener(status);
        try {
            call.close(Statuses.toCore(status), null);
        } catch (IllegalStateException e) {
            // already closed
        }
    }

    @Override
    public void optimizeForDirectExecutor() {
    }

    /** The transport's attributes (remote and local address, transport name), as grpc's filters left them. */
    @Override
    public Attributes getAttributes() {
        return transport.attributes();
    }

    @Override
    public String getAuthority() {
        return call.getAuthority();
    }

    @Override
    public void triggerEvent(Object event) {
        ServerStreamListener l = listener;
        if (l != null && !listenerClosed) {
            l.triggerEvent(event);
        }
    }

    @Override
    public StatsTraceContext statsTraceContext() {
        return stats;
    }

    @Override
    public int streamId() {
        return -1;
    }

    @Override
    public void setOnReadyThreshold(int numBytes) {
        // rdmarpc's readiness threshold is fixed (64 KiB queued).
    }

    private void closeListener(Status status) {
        if (!LISTENER_CLOSED.compareAndSet(this, false, true)) {
            return;
        }
        Status closed = closeStatus;
        stats.streamClosed(status.isOk() && closed != null ? closed : status);
        try {
            listener.closed(status);
        } finally {
            transport.streamClosed();
        }
    }

    /** rdmarpc's callbacks for the call, one at a time. */
    private final class CallListener extends ServerCall.Listener<InputStream> {
        @Override
        public void onMessage(InputStream message) {
            transport.dataReceived();
            if (listenerClosed) {
                GrpcUtil.closeQuietly(message); // nobody will read it: free its slab now
                return;
            }
            int size;
            try {
                size = message.available();
            } catch (IOException e) {
                throw new IllegalStateException(e);
            }
            int seq = inboundSeqNo++;
            if (message instanceof StreamMarshaller.Compressed) {
                try {
                    listener.messagesAvailable(new SingleMessageProducer(
                            Compression.received(decompressor, message, seq, size, transport.maxInboundMessageSize(), stats)));
                } catch (StatusException e) {
                    inboundFailed(e.getStatus());
                }
                return;
            }
            stats.inboundMessage(seq);
            stats.inboundWireSize(size);
            stats.inboundUncompressedSize(size);
            stats.inboundMessageRead(seq, size, size);
            listener.messagesAvailable(new SingleMessageProducer(message));
        }

        @Override
        public void onHalfClose() {
            if (!listenerClosed) {
                listener.halfClosed();
            }
        }

        @Override
        public void onCancel() {
            Status s = cancelStatus;
            closeListener(s != null ? s : Status.CANCELLED.withDescription(
                    "call cancelled: by the client, its deadline, or the connection closing"));
        }

        @Override
        public void onComplete() {
            Status s = cancelStatus;
            closeListener(s != null ? s : Status.OK);
        }

        @Override
        public void onReady() {
            if (!listenerClosed) {
                listener.onReady();
            }
        }
    }
}
