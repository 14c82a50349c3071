package dev.rdmarpc.core.internal.call;

import dev.rdmarpc.core.CallOptions;
import dev.rdmarpc.core.Deadline;
import dev.rdmarpc.core.Metadata;
import dev.rdmarpc.core.MethodDescriptor;
import dev.rdmarpc.core.Status;
import dev.rdmarpc.core.buffer.SlabBuffer;
import dev.rdmarpc.core.internal.attachment.Attachments;
import dev.rdmarpc.core.internal.attachment.OutgoingAttachment;
import dev.rdmarpc.core.internal.channel.ChannelImpl;
import dev.rdmarpc.core.internal.channel.ClientConnection;
import dev.rdmarpc.core.protocol.Frames;

import java.util.function.BooleanSupplier;
import java.util.function.Consumer;

/**
 * What one client call sends: its request metadata (encoded into the HEADERS that open the stream), the one request of
 * a call that sends one (held until the half-close sends it with END_STREAM), and the messages and END_STREAM of the
 * others, through the {@link OutboundFlow} it binds to the connection once the stream opens. Guarded by its
 * {@link ClientStream}'s lock, as is every method here; it never calls back into the stream: what ends the call (a
 * server's limit the request would break) is returned as a status for the stream to end the call with.
 */
final class ClientSendSide {
    private final ChannelImpl channel;
    /** The send side's flow control, from the channel's {@link StreamParts}; null once given back. */
    private OutboundFlow outbound;
    /** The metadata sent in HEADERS, or null for none. */
    private Metadata requestHeaders;
    /** The request of a call that sends one, with its attachment or null, until the half-close sends it. */
    private SlabBuffer heldRequest;
    private OutgoingAttachment heldAttachment;
    /** The largest attachment the server takes (negative: none), once bound. */
    private int peerMaxAttachment;

    ClientSendSide(ChannelImpl channel) {
        this.channel = channel;
    }

    /** With the lock held, as a call begins: takes a send side from the channel; {@code failures} hears failed attachments. */
    void begin(Consumer<Status> failures) {
        outbound = channel.parts().takeOutbound();
        outbound.onAttachmentFailed(failures);
    }

    /** The request metadata: {@code headers} (null for none) with the call options' and the compression's. */
    void requestHeaders(Metadata headers, CallOptions options) {
        Metadata md = headers;
        if (options.getHeaders() != null) {
            if (md == null) {
                md = new Metadata();
            }
            md.merge(options.getHeaders());
        }
        if (options.getCompressor() != null) {
            md = Gzip.encodingNamed(md);
            md.put(Gzip.ACCEPT_ENCODING, Gzip.NAME);
        }
        requestHeaders = md;
    }

    /** Why {@code c}'s server would refuse the request metadata (RESOURCE_EXHAUSTED), or null. */
    Status metadataRefusal(ClientConnection c) {
        long metadataBytes = Frames.metadataBytes(requestHeaders);
        int peerMax = c.peerLimits().maxMetadataBytes();
        if (metadataBytes <= peerMax) {
            return null;
        }
        return Status.RESOURCE_EXHAUSTED.withDescription("request metadata of " + metadataBytes
                + " bytes (keys and values plus " + Frames.METADATA_ENTRY_OVERHEAD + " per entry) exceeds the "
                + peerMax + " bytes the server at " + channel.authority() + " accepts; the call was not sent");
    }

    /** The HEADERS frame opening the stream as {@code streamId} for {@code method}, with the time left to {@code deadline}. */
    SlabBuffer encodeHeaders(int streamId, int maxPayload, MethodDescriptor<?, ?> method, Deadline deadline) {
        long timeoutNanos = deadline == null ? 0 : Math.max(1, deadline.remainingNanos());
        return Frames.requestHeaders(channel.pool(), streamId, false, channel.encodedPath(method),
                channel.encodedAuthority(), timeoutNanos, requestHeaders, maxPayload);
    }

    /**
     * Whether the HEADERS are flushed as they open the stream: not when something follows at once ({@code sendsOne}: a
     * call that sends one request sends it next, flushed with its END_STREAM, and the HEADERS go with it).
     */
    boolean headersGoAlone(boolean halfCloseRequested, boolean sendsOne) {
        return heldRequest == null && outbound.isEmpty() && !halfCloseRequested && !sendsOne;
    }

    /** The stream opened on {@code c} as {@code id}: messages go out from now on. */
    void bind(ClientConnection c, int id) {
        var peer = c.peerSettings();
        peerMaxAttachment = c.peerLimits().maxAttachmentBytes();
        outbound.bind(c.out, c.sendWindow, id, peer.initialWindow(),
                Math.min(c.out.preferredChunkSize(), peer.maxFramePayload()));
    }

    /** Whether the stream opened (messages go out rather than wait). */
    boolean isBound() {
        return outbound.isBound();
    }

    /** Keeps the one request of a call that sends one until the half-close; false (both dropped) when one is held. */
    boolean hold(SlabBuffer framed, OutgoingAttachment att) {
        if (heldRequest != null) {
            Attachments.drop(framed, att);
            return false;
        }
        heldRequest = framed;
        heldAttachment = att;
        return true;
    }

    /**
     * Sends a message (and its attachment or null; both owned from here), waiting on {@code lock} for room while the
     * send side is over its limit and {@code ended} says the call goes on. Returns why the server would refuse it (the
     * call must end), else null.
     */
    Status send(SlabBuffer framed, OutgoingAttachment att, Object lock, BooleanSupplier ended) {
        Status refused = attachmentRefusal(att);
        if (refused != null) {
            Attachments.drop(framed, att);
            return refused;
        }
        int need = framed.length() + (att == null ? 0 : att.size());
        if (outbound.mustAwaitRoom(need)) {
            outbound.awaitRoom(lock, need, ended);
        }
        if (ended.getAsBoolean()) {
            Attachments.drop(framed, att);
            return null;
        }
        outbound.message(framed, att, false, true);
        return null;
    }

    /** Half-closes stream {@code id}, with the held request if any; returns why the server would refuse it, else null. */
    Status halfClose(int id) {
        if (heldRequest == null) {
            outbound.control(Frames.endStream(channel.pool(), id), true);
            return null;
        }
        SlabBuffer b = heldRequest;
        OutgoingAttachment a = heldAttachment;
        heldRequest = null;
        heldAttachment = null;
        Status refused = attachmentRefusal(a);
        if (refused != null) {
            Attachments.drop(b, a);
            return refused;
        }
        outbound.message(b, a, true, true);
        return null;
    }

    /** Once bound: why the server would refuse {@code att} (RESOURCE_EXHAUSTED), or null. */
    private Status attachmentRefusal(OutgoingAttachment att) {
        if (att == null || !outbound.isBound() || att.size() <= peerMaxAttachment) {
            return null;
        }
        return Status.RESOURCE_EXHAUSTED.withDescription(peerMaxAttachment < 0
                ? "the server at " + channel.authority() + " takes no attachments; the message was not sent"
                : Attachments.tooLarge("request", att.size(), peerMaxAttachment) + " of the server at "
                        + channel.authority() + "; the message was not sent");
    }

    /** A WINDOW granted {@code increment} more bytes; wakes senders waiting on {@code lock}. */
    void onWindow(int increment, Object lock) {
        outbound.onWindow(increment);
        outbound.wakeWaiters(lock);
    }

    /** The connection can take more again; wakes senders waiting on {@code lock}. */
    void onConnectionWritable(Object lock) {
        outbound.onConnectionWritable();
        outbound.wakeWaiters(lock);
    }

    /** Whether a message sent now goes out without waiting. */
    boolean isReady() {
        return outbound.isReady();
    }

    /** The call ended: drops what was not sent and wakes senders waiting on {@code lock}. */
    void discard(Object lock) {
        outbound.discard();
        if (heldRequest != null) {
            Attachments.drop(heldRequest, heldAttachment);
            heldRequest = null;
            heldAttachment = null;
        }
        outbound.wakeWaiters(lock);
    }

    /** Gives the flow-control part back to the channel for its next call (nothing is sent after this). */
    void givePartsBack() {
        OutboundFlow out = outbound;
        outbound = null;
        channel.parts().recycle(out);
    }

    /** When the stream is recycled: as new. */
    void reset() {
        requestHeaders = null;
        heldRequest = null;
        heldAttachment = null;
        peerMaxAttachment = 0;
    }
}
