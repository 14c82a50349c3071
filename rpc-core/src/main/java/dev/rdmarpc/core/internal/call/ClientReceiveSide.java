package dev.rdmarpc.core.internal.call;

import dev.rdmarpc.core.Attachment;
import dev.rdmarpc.core.CallOptions;
import dev.rdmarpc.core.Metadata;
import dev.rdmarpc.core.MethodDescriptor;
import dev.rdmarpc.core.ResponseMetadata;
import dev.rdmarpc.core.Status;
import dev.rdmarpc.core.buffer.SlabBuffer;
import dev.rdmarpc.core.internal.attachment.Attachments;
import dev.rdmarpc.core.internal.channel.ChannelImpl;

import java.lang.foreign.MemorySegment;

/**
 * What one client call receives: its responses, reassembled from MESSAGE frames by its {@link InboundMessages} (from
 * the channel's {@link StreamParts}) within the receive window and the size limits, the credit granted back to the
 * server as they are read, the parse of each, and the response metadata its call options capture. Guarded by its
 * {@link ClientStream}'s lock, except {@link #parse}; it never calls back into the stream: a response over the limits
 * is returned as the status the stream ends the call with.
 */
final class ClientReceiveSide {
    private final ChannelImpl channel;
    /** The reassembler; null once given back. */
    private InboundMessages inbound;

    ClientReceiveSide(ChannelImpl channel) {
        this.channel = channel;
    }

    /** As a call begins: takes a reassembler from the channel. */
    void begin() {
        inbound = channel.parts().takeInbound();
    }

    /** The responses received and not yet delivered (null once given back). */
    InboundMessages messages() {
        return inbound;
    }

    /**
     * A MESSAGE frame of {@code length} bytes of {@code memory} at {@code offset}, lying in {@code holder} when not
     * null; {@code wanted}: the listener asked for more than is queued. Returns {@link InboundMessages#onFrame}'s result.
     */
    int onFrame(int flags, MemorySegment memory, SlabBuffer holder, long offset, int length, boolean wanted) {
        channel.metrics().bytesReceived(length);
        return inbound.onFrame(flags, memory, holder, offset, length, wanted);
    }

    /** Whether the last frame's holder was kept (a reference the caller must not release). */
    boolean keptHolder() {
        return inbound.keptHolder();
    }

    /** Why the last frame's message was refused ({@link InboundMessages#TOO_LARGE}): RESOURCE_EXHAUSTED. */
    Status tooLarge() {
        long size = inbound.rejectedSize();
        return Status.RESOURCE_EXHAUSTED.withDescription(inbound.rejectedAttachment()
                ? Attachments.tooLarge("response", size, channel.maxInboundAttachmentSize())
                : "response message of " + size + " bytes exceeds the maximum inbound message size "
                        + channel.maxInboundMessageSize());
    }

    /** The listener asked for more: the credit to grant the server now (0 for none yet). */
    int onDemand() {
        inbound.onDemand();
        return inbound.takeCredit();
    }

    /** The credit to grant the server now for what was read (0 for none yet). */
    int takeCredit() {
        return inbound.takeCredit();
    }

    /** Drops every response not yet delivered (none once given back). */
    void releaseAll() {
        if (inbound != null) {
            inbound.releaseAll();
        }
    }

    /** Gives the reassembler back to the channel for its next call (nothing is received after this). */
    void givePartsBack() {
        InboundMessages in = inbound;
        inbound = null;
        channel.parts().recycle(in);
    }

    /** Response headers {@code md} (null for none) as the call records them: into the options' capture, if any. */
    static Metadata headers(CallOptions options, Metadata md) {
        return record(options, md, false);
    }

    /** Trailers {@code md} (null for none) as the call records them: into the options' capture, if any. */
    static Metadata trailers(CallOptions options, Metadata md) {
        return record(options, md, true);
    }

    private static Metadata record(CallOptions options, Metadata md, boolean trailers) {
        ResponseMetadata capture = options.getResponseMetadata();
        if (capture == null) {
            return md;
        }
        Metadata m = md != null ? md : new Metadata();
        if (trailers) {
            capture.recordTrailers(m);
        } else {
            capture.recordHeaders(m);
        }
        return m;
    }

    /** Without the lock: a response as the listener gets it; {@code attachment} is the one received with it, or null. */
    <RespT> RespT parse(MethodDescriptor<?, RespT> method, CallOptions options, SlabBuffer buf, boolean compressed,
                        int split, Attachment attachment, SlabBuffer apart) {
        if (split >= 0) {
            return Attachments.parse(method.getResponseMarshaller(), buf, split, compressed, attachment, apart);
        }
        return Gzip.parseOwned(method.getResponseMarshaller(), buf, compressed, options.getCompressor() != null,
                channel.maxInboundMessageSize());
    }
}
