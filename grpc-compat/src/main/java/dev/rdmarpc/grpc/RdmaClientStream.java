package dev.rdmarpc.grpc;

import dev.rdmarpc.core.ClientCall;
import dev.rdmarpc.core.RawMetadata;
import io.grpc.Attributes;
import io.grpc.CallOptions;
import io.grpc.Codec;
import io.grpc.Compressor;
import io.grpc.Deadline;
import io.grpc.Decompressor;
import io.grpc.DecompressorRegistry;
import io.grpc.Metadata;
import io.grpc.MethodDescriptor;
import io.grpc.Status;
import io.grpc.StatusException;
import io.grpc.internal.ClientStream;
import io.grpc.internal.ClientStreamListener;
import io.grpc.internal.ClientStreamListener.RpcProgress;
import io.grpc.internal.GrpcUtil;
import io.grpc.internal.InsightBuilder;
import io.grpc.internal.StatsTraceContext;

import java.io.IOException;
import java.io.InputStream;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.Locale;
import java.util.concurrent.TimeUnit;

/**
 * A grpc client stream carried by one rdmarpc {@link ClientCall}: grpc's messages pass through as
 * serialized streams, its metadata, deadline and cancellation map onto rdmarpc's, and the rdmarpc
 * call's callbacks (delivered one at a time, outside the call's lock, see {@link Deliveries}) become stream-listener calls.
 */
final class RdmaClientStream implements ClientStream {
    /** The options of every call without a deadline: callbacks run where they become ready. */
    private static final dev.rdmarpc.core.CallOptions CALL_OPTIONS = dev.rdmarpc.core.CallOptions.DEFAULT.withExecutor(Deliveries.EXECUTOR);
    private static final VarHandle LISTENER_CLOSED;

    static {
        try {
            LISTENER_CLOSED = MethodHandles.lookup().findVarHandle(RdmaClientStream.class, "listenerClosed", boolean.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    private final RdmaClientTransport transport;
    private final MethodDescriptor<?, ?> method;
    private final Metadata headers;
    private final boolean countsForInUse;
    private final StatsTraceContext stats;
    /** Set once, by the first {@link #closeListener}. */
    private volatile boolean listenerClosed;

    private volatile Deadline deadline;
    private volatile int maxInboundMessageSize = -1;
    private volatile int maxOutboundMessageSize = -1;
    private volatile Status cancelReason;
    private volatile ClientCall<InputStream, InputStream> call;
    private volatile boolean registered;
    private volatile Compressor compressor = Codec.Identity.NONE;
    private volatile boolean messageCompression = true;
    private volatile DecompressorRegistry decompressorRegistry = DecompressorRegistry.getDefaultInstance();
    /** The response's decompressor, from its grpc-encoding header; null while identity. */
    private volatile Decompressor decompressor;
    private ClientStreamListener listener;
    /** Links in the transport's {@link OpenStreams}; guarded by the transport's lock. */
    RdmaClientStream prevOpen;
    RdmaClientStream nextOpen;
    boolean listed;
    private int outboundSeqNo;
    private int inboundSeqNo;

    RdmaClientStream(RdmaClientTransport transport, MethodDescriptor<?, ?> method, Metadata headers,
                     CallOptions callOptions, StatsTraceContext stats) {
        this.transport = transport;
        this.method = method;
        this.headers = headers;
        this.countsForInUse = RdmaClientTransport.countsForInUse(callOptions);
        this.stats = stats;
    }

    @Override
    public void start(ClientStreamListener streamListener) {
        this.listener = streamListener;
        stats.clientOutboundHeaders();
        Status refused = transport.streamStarting(this, countsForInUse);
        if (refused != null) {
            // Never sent: grpc retries it transparently on another transport, as often as it takes
            // (MISCARRIED, as grpc's own transports report a stream started after GOAWAY).
            closeListener(refused, RpcProgress.MISCARRIED, new Metadata());
            return;
        }
        registered = true;
        Status early = cancelReason;
        if (early != null) {
            closeListener(early, RpcProgress.PROCESSED, new Metadata());
            return;
        }
        dev.rdmarpc.core.Metadata md;
        try {
            md = Headers.toCore(headers, Headers.REQUEST_EXCLUDED);
            RawMetadata.putRaw(md, "user-agent", transport.userAgentBytes());
        } catch (IllegalArgumentException e) {
            closeListener(Status.INTERNAL.withDescription("request metadata cannot be sent: " + e.getMessage()).withCause(e),
                    RpcProgress.PROCESSED, new Metadata());
            return;
        }
        dev.rdmarpc.core.CallOptions options = CALL_OPTIONS;
        Deadline d = deadline;
        if (d != null) {
            options = options.withDeadline(dev.rdmarpc.core.Deadline.after(d.timeRemaining(TimeUnit.NANOSECONDS), TimeUnit.NANOSECONDS));
        }
        ClientCall<InputStream, InputStream> c = transport.channel().newCall(transport.coreMethod(method), options);
        c.start(new CallListener(), md);
        call = c;
        Status reason = cancelReason;
        if (reason != null) {
            c.cancel(reason.getDescription(), reason.asRuntimeException());
        }
    }

    @Override
    public void request(int numMessages) {
        ClientCall<InputStream, InputStream> c = call;
        if (c != null) {
            c.request(numMessages);
        }
    }

    /**
     * Sends one request. Never throws: grpc may replay this from a delayed stream where nothing
     * would catch it, so a message that cannot be sent cancels the stream as grpc's ClientCall
     * would (CANCELLED "Failed to stream message", caused by e.g. RESOURCE_EXHAUSTED "message too large").
     */
    @Override
    public void writeMessage(InputStream message) {
        try {
            InputStream m = StreamMarshaller.withKnownLength(message);
            int size = m.available();
            int max = maxOutboundMessageSize;
            if (max >= 0 && size > max) {
                throw Status.RESOURCE_EXHAUSTED
                        .withDescription(String.format(Locale.US, "message too large %d > %d", size, max))
                        .asRuntimeException();
            }
            ClientCall<InputStream, InputStream> c = call;
            if (c == null) {
                return; // refused or cancelled before it started
            }
            int seq = outboundSeqNo++;
            stats.outboundMessage(seq);
            int wireSize = size;
            if (Compression.compresses(compressor, messageCompression)) {
                // As grpc's framer: the size limit above is on the uncompressed message.
                m = Compression.compress(compressor, m);
                wireSize = m.available();
            }
            c.sendMessage(m);
            stats.outboundWireSize(wireSize);
            stats.outboundUncompressedSize(size);
            stats.outboundMessageSent(seq, wireSize, size);
        } catch (IOException | RuntimeException e) {
            cancel(Status.CANCELLED.withDescription("Failed to stream message").withCause(e));
        } finally {
            GrpcUtil.closeQuietly(message);
        }
    }

    @Override
    public void flush() {
        // rdmarpc flushes each message of a streaming call as it is sent.
    }

    @Override
    public boolean isReady() {
        ClientCall<InputStream, InputStream> c = call;
        return c != null && !listenerClosed && c.isReady();
    }

    @Override
    public void optimizeForDirectExecutor() {
    }

    /** grpc's ClientCallImpl gives the call's compressor (identity unless CallOptions name one). */
    @Override
    public void setCompressor(Compressor compressor) {
        this.compressor = compressor;
    }

    @Override
    public void setMessageCompression(boolean enable) {
        this.messageCompression = enable;
    }

    @Override
    public void cancel(Status reason) {
        if (cancelReason == null) {
            cancelReason = reason;
        }
        ClientCall<InputStream, InputStream> c = call;
        if (c != null) {
            c.cancel(reason.getDescription(), reason.asRuntimeException());
        }
        // Otherwise start() has not opened the call yet and closes the listener with the reason.
    }

    @Override
    public void halfClose() {
        ClientCall<InputStream, InputStream> c = call;
        if (c != null) {
            c.halfClose();
        }
    }

    @Override
    public void setAuthority(String authority) {
        // rdmarpc sends the authority of the connection; a per-call override is not carried yet.
    }

    /**
     * HTTP-level (content-encoding) decompression of the whole stream: rdmarpc has no such layer and
     * never sends {@code content-accept-encoding}, so servers never use it; per-message compression
     * still applies.
     */
    @Override
    public void setFullStreamDecompression(boolean fullStreamDecompression) {
    }

    @Override
    public void setDecompressorRegistry(DecompressorRegistry decompressorRegistry) {
        this.decompressorRegistry = decompressorRegistry;
    }

    @Override
    public void setMaxInboundMessageSize(int maxSize) {
        this.maxInboundMessageSize = maxSize;
    }

    @Override
    public void setMaxOutboundMessageSize(int maxSize) {
        this.maxOutboundMessageSize = maxSize;
    }

    @Override
    public void setDeadline(Deadline deadline) {
        this.deadline = deadline;
    }

    @Override
    public Attributes getAttributes() {
        return transport.getAttributes();
    }

    @Override
    public void appendTimeoutInsight(InsightBuilder insight) {
        insight.appendKeyValue("remote_addr", transport.remoteAddress());
    }

    /** Cancels from the transport side with a status the listener is to see (e.g. an oversize response). */
    private void fail(Status status) {
        if (cancelReason == null) {
            cancelReason = status;
        }
        ClientCall<InputStream, InputStream> c = call;
        if (c != null) {
            c.cancel(status.getDescription(), null);
        }
    }

    private void closeListener(Status status, RpcProgress progress, Metadata trailers) {
        if (!LISTENER_CLOSED.compareAndSet(this, false, true)) {
            return;
        }
        stats.streamClosed(status);
        try {
            listener.closed(status, progress, trailers);
        } finally {
            if (registered) {
                transport.streamClosed(this, countsForInUse);
            }
        }
    }

    /** rdmarpc's callbacks for the call, one at a time. */
    private final class CallListener extends ClientCall.Listener<InputStream> {
        @Override
        public void onHeaders(dev.rdmarpc.core.Metadata md) {
            transport.dataReceived();
            if (Headers.size(md) > transport.maxInboundMetadataSize()) {
                fail(Status.RESOURCE_EXHAUSTED.withDescription("response headers of " + Headers.size(md)
                        + " bytes exceed the maximum inbound metadata size " + transport.maxInboundMetadataSize()));
                return;
            }
            Metadata h = Headers.toGrpc(md, Headers.NONE);
            String encoding = h.get(GrpcUtil.MESSAGE_ENCODING_KEY);
            if (encoding != null) {
                Decompressor d = decompressorRegistry.lookupDecompressor(encoding);
                if (d == null) {
                    fail(Status.INTERNAL.withDescription(String.format(Locale.US, "Can't find decompressor for %s", encoding)));
                    return;
                }
                if (d != Codec.Identity.NONE) {
                    decompressor = d;
                }
            }
            stats.clientInboundHeaders(h);
            listener.headersRead(h);
        }

        @Override
        public void onMessage(InputStream message) {
            transport.dataReceived();
            if (listenerClosed || cancelReason != null) {
                GrpcUtil.closeQuietly(message); // nobody will read it: free its slab now
                return;
            }
            int size;
            try {
                size = message.available();
            } catch (IOException e) {
                throw new IllegalStateException(e);
            }
            int max = maxInboundMessageSize;
            if (max >= 0 && size > max) {
                GrpcUtil.closeQuietly(message);
                fail(Status.RESOURCE_EXHAUSTED.withDescription(String.format(Locale.US,
                        "gRPC message exceeds maximum size %d: %d", max, size)));
                return;
            }
            int seq = inboundSeqNo++;
            if (message instanceof StreamMarshaller.Compressed) {
                int limit = max >= 0 ? Math.min(max, transport.maxInboundMessageSize()) : transport.maxInboundMessageSize();
                try {
                    listener.messagesAvailable(new SingleMessageProducer(
                            Compression.received(decompressor, message, seq, size, limit, stats)));
                } catch (StatusException e) {
                    fail(e.getStatus());
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
        public void onClose(dev.rdmarpc.core.Status status, dev.rdmarpc.core.Metadata trailers) {
            // Not counted as data received for keepalive: a close may be local (deadline, cancel, lost connection).
            Status reason = cancelReason;
            if (reason != null) {
                closeListener(reason, RpcProgress.PROCESSED, new Metadata());
                return;
            }
            Status s = Statuses.toGrpc(status);
            Deadline d = deadline;
            if (s.getCode() == Status.Code.DEADLINE_EXCEEDED && d != null && d.isExpired()) {
                // Our own deadline, fired by rdmarpc's timer or the server's: report it as grpc's
                // transports do (a cancelled stream), so that grpc words it from its own deadline.
                s = Status.CANCELLED.withDescription(s.getDescription()).withCause(s.getCause());
            }
            Metadata t;
            if (Headers.size(trailers) > transport.maxInboundMetadataSize()) {
                s = Status.RESOURCE_EXHAUSTED.withDescription("response trailers of " + Headers.size(trailers)
                        + " bytes exceed the maximum inbound metadata size " + transport.maxInboundMetadataSize());
                t = new Metadata();
            } else {
                t = Headers.toGrpc(trailers, Headers.NONE);
                stats.clientInboundTrailers(t);
            }
            closeListener(s, Refusals.progress(status), t);
        }

        @Override
        public void onReady() {
            if (!listenerClosed) {
                listener.onReady();
            }
        }
    }
}
