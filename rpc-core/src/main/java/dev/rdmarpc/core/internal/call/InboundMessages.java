package dev.rdmarpc.core.internal.call;

import dev.rdmarpc.core.buffer.SlabBuffer;
import dev.rdmarpc.core.buffer.SlabPool;
import dev.rdmarpc.core.internal.flow.ConnectionWindow;
import dev.rdmarpc.core.protocol.FlowCapability;
import dev.rdmarpc.core.protocol.FrameFlags;
import dev.rdmarpc.core.protocol.ProtocolException;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteOrder;

/**
 * One stream's receive side: reassembles MESSAGE frames into whole messages in slab buffers,
 * each grown as its bytes arrive (never more than {@link #GROWTH_FACTOR} times what has arrived, so a
 * peer that announces a large message and sends little makes this side hold little),
 * queues them until the application asks (its {@link MessageQueue}), and keeps the receive window. As in grpc-java, bytes
 * count as consumed when the application takes them: a whole message's bytes are credited back
 * when it is delivered, and the bytes of a message still arriving are credited as they come only
 * while the application has asked for more than is queued (so a message larger than the window
 * can arrive). A reader that stops asking stops the sender after one window. A message whose bytes all arrive in one
 * frame (with its length prefix, or after a BEGIN that carried only the prefix) whose transport owns the buffer
 * holding it is kept in that buffer (a retained slice, no copy) when it fills at least half of it; so is an attachment
 * whose bytes all arrive in one frame after its message's own (the message then queues in its own buffer, the
 * attachment beside it). Every other message is copied once, into its own buffer. Each message is also charged to the
 * connection's window when there is one ({@link ConnectionWindow}), and released from it when taken or dropped; a
 * message the connection window refuses is dropped ({@link #OVER_WINDOW}). The queue of waiting messages shrinks back
 * once drained. Not thread-safe: the owning stream locks.
 */
public final class InboundMessages {
    private static final ValueLayout.OfInt INT = ValueLayout.JAVA_INT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);

    /** Result of {@link #onFrame}: nothing complete yet. */
    static final int PARTIAL = 0;
    /** Result of {@link #onFrame}: a message was completed and queued. */
    static final int COMPLETED = 1;
    /** Result of {@link #onFrame}: the announced message is larger than allowed; see {@link #rejectedSize()}. */
    static final int TOO_LARGE = 2;
    /**
     * Result of {@link #onFrame}: the connection window refused the message (its peer does not keep the window and
     * went past it, or the connection is over its memory share); see {@link #refusal()}. Its later frames are dropped.
     */
    static final int OVER_WINDOW = 3;
    /**
     * A message buffer is at most this many times the bytes received for it so far (before the pool rounds it up to
     * its size class), and never more than the announced size: memory follows bytes received, not bytes announced,
     * while a message arriving in a few large frames still lands in one buffer without being copied again.
     */
    static final int GROWTH_FACTOR = 4;

    private final SlabPool pool;
    /** The connection's window the messages are charged to, or null for none. */
    private final ConnectionWindow connection;
    /** What the message being received (or dropped) is charged to {@link #connection}. */
    private int assemblingCharge;
    /** The cost of the message being received: its frames' payload bytes, as its BEGIN announced them. */
    private long assemblingCost;
    private String refusal;
    private final int maxMessageSize;
    /** What this side advertised for the connection: -1, none (the ATTACHMENT flag is a protocol error). */
    private final int maxAttachmentSize;
    /** What the current stream accepts (at most {@link #maxAttachmentSize}; -1: none, refused as too large). */
    private int streamAttachmentLimit;
    private final int window;
    private int recvWindow;
    private int pendingCredit;
    private int withheldPartial;

    /** The message being reassembled; null until its first data byte arrives (see {@link #inMessage}). */
    private SlabBuffer assembling;
    /** Between a BEGIN and its END. */
    private boolean inMessage;
    private boolean assemblingCompressed;
    private int assembled;
    private int expected;
    private long rejectedSize;
    private boolean rejectedAttachment;
    private boolean discarding;
    /** Where the message being reassembled ends and its attachment begins; -1 when it has no attachment. */
    private int assemblingSplit = -1;
    /** Whether the last frame taken was queued as a slice of its holder. */
    private boolean keptHolder;

    /** The whole messages waiting for the application. */
    private final MessageQueue queue = new MessageQueue();

    /**
     * With {@code maxAttachmentSize} bytes of attachment accepted per message (-1: none, the flag is refused), charging
     * messages to {@code connection} (null: none).
     */
    InboundMessages(SlabPool pool, int maxMessageSize, int maxAttachmentSize, int window, ConnectionWindow connection) {
        this.pool = pool;
        this.connection = connection;
        this.maxMessageSize = maxMessageSize;
        this.maxAttachmentSize = maxAttachmentSize;
        this.streamAttachmentLimit = maxAttachmentSize;
        this.window = window;
        this.recvWindow = window;
    }

    /**
     * Sets what the current stream's messages may carry: an attachment of up to {@code maxBytes}, or none (-1), within
     * what the connection advertised. An attachment over it is refused at its BEGIN frame ({@link #TOO_LARGE}, with
     * {@link #rejectedAttachment()}), before any of its bytes are held.
     */
    void limitAttachments(int maxBytes) {
        streamAttachmentLimit = Math.min(maxBytes, maxAttachmentSize);
    }

    /** What the current stream's messages may carry as an attachment (-1: none). */
    int attachmentLimit() {
        return streamAttachmentLimit;
    }

    /**
     * Takes one MESSAGE frame whose bytes lie in {@code holder}'s block (then {@code memory} is its segment), or null
     * when the caller owns no buffer for them. {@code demand} says whether the application has asked for more messages
     * than are queued. Throws ProtocolException on a framing or window violation. A frame that carries a whole message
     * and fills at least half of its holder ({@link #worthKeeping}) is queued as a retained slice of the holder instead
     * of a copy; see {@link #keptHolder()}.
     */
    int onFrame(int flags, MemorySegment memory, SlabBuffer holder, long offset, int len, boolean demand) {
        keptHolder = false;
        if (len > recvWindow) {
            throw new ProtocolException("MESSAGE of " + len + " bytes exceeds the stream's flow-control window (" + recvWindow + " left)");
        }
        recvWindow -= len;
        boolean begin = (flags & FrameFlags.BEGIN) != 0;
        boolean end = (flags & FrameFlags.END) != 0;
        long dataOffset = 0;
        if (begin) {
            if (inMessage || discarding) {
                throw new ProtocolException("MESSAGE BEGIN inside an unfinished message");
            }
            if (len < 4) {
                throw new ProtocolException("MESSAGE BEGIN frame of " + len + " bytes has no length prefix");
            }
            long total = Integer.toUnsignedLong(memory.get(INT, offset));
            dataOffset = 4;
            long attachment = -1;
            if ((flags & FrameFlags.ATTACHMENT) != 0) {
                if (maxAttachmentSize < 0) {
                    throw new ProtocolException("MESSAGE with an attachment, but this side takes no attachments");
                }
                if (len < 8) {
                    throw new ProtocolException("MESSAGE BEGIN frame of " + len + " bytes with ATTACHMENT has no attachment length");
                }
                attachment = Integer.toUnsignedLong(memory.get(INT, offset + 4));
                dataOffset = 8;
            }
            rejectedAttachment = total <= maxMessageSize && attachment >= 0
                    && (attachment > streamAttachmentLimit || total + attachment > SlabPool.MAX_BLOCK);
            long cost = dataOffset + total + Math.max(attachment, 0);
            assemblingCost = cost;
            if (!chargeConnection(connection == null ? 0 : connection.strict()
                    ? FlowCapability.messageCharge(cost, len, connection.window())
                    : Math.max(len, FlowCapability.MIN_MESSAGE_CHARGE))) {
                rejectedSize = cost;
                return dropForWindow(len, end);
            }
            if (total > maxMessageSize || rejectedAttachment) {
                releaseCharge(); // the message is dropped: it holds nothing
                rejectedSize = rejectedAttachment ? attachment : total;
                discarding = !end;
                pendingCredit += len;
                return TOO_LARGE;
            }
            assemblingSplit = attachment < 0 ? -1 : (int) total;
            if (attachment > 0) {
                total += attachment;
            }
            expected = (int) total;
            assembled = 0;
            inMessage = true;
            assemblingCompressed = (flags & FrameFlags.COMPRESSED) != 0;
        } else if (discarding) {
            pendingCredit += len;
            if (end) {
                discarding = false;
            }
            return PARTIAL;
        } else if (!inMessage) {
            throw new ProtocolException("MESSAGE continuation without BEGIN");
        } else if ((flags & FrameFlags.COMPRESSED) != 0) {
            throw new ProtocolException("COMPRESSED flag on a MESSAGE continuation (it belongs on BEGIN)");
        } else if ((flags & FrameFlags.ATTACHMENT) != 0) {
            throw new ProtocolException("ATTACHMENT flag on a MESSAGE continuation (it belongs on BEGIN)");
        } else if (chargedAsBytesArrive() && !chargeConnection(len)) {
            rejectedSize = expected;
            return dropForWindow(len, end);
        }
        long data = len - dataOffset;
        boolean keepable = end && holder != null && worthKeeping(len, holder);
        if (keepable && assemblingSplit > 0 && assembled == assemblingSplit && data == expected - assembled && data > 0) {
            // the message's own bytes are in: its whole attachment in this frame stays where it arrived, beside them
            keptHolder = true;
            return complete(takeAssembled(assembled), len, holder.retainedSlice(offset + dataOffset, (int) data));
        }
        if (keepable && assembled == 0 && data == expected) {
            // the whole message in this frame: alone, or after a BEGIN that carried only its length prefix (which
            // took no buffer)
            keptHolder = true;
            return complete(holder.retainedSlice(offset + dataOffset, expected), len, null);
        }
        if (assembled + data > expected) {
            throw new ProtocolException("MESSAGE carries more bytes than the " + expected + " announced");
        }
        if (data > 0 || end) { // a BEGIN with only the length prefix takes no buffer yet
            ensureCapacity(assembled + (int) data);
            long ahead = Math.min(assembling.capacity(), assemblingCost) - assemblingCharge;
            if (chargedAsBytesArrive() && ahead > 0 && !chargeConnection((int) ahead)) {
                // charged what the message's buffer takes when that is more than its bytes (it grows ahead of them),
                // up to the message's whole cost
                rejectedSize = expected;
                return dropForWindow(len, end);
            }
        }
        if (data > 0) {
            MemorySegment.copy(memory, offset + dataOffset, assembling.segment(), assembled, data);
        }
        assembled += (int) data;
        if (end != (assembled == expected)) {
            throw new ProtocolException(end
                    ? "MESSAGE ended after " + assembled + " of " + expected + " announced bytes"
                    : "MESSAGE reached its announced " + expected + " bytes without END");
        }
        if (!end) {
            if (demand) {
                pendingCredit += len;
            } else {
                withheldPartial += len;
            }
            return PARTIAL;
        }
        return complete(takeAssembled(expected), len, null);
    }

    /** The buffer reassembled so far, holding {@code length} bytes; the caller owns it. */
    private SlabBuffer takeAssembled(int length) {
        SlabBuffer message = assembling;
        message.setLength(length);
        assembling = null;
        return message;
    }

    /**
     * Queues the message that a frame of {@code frameLength} bytes completed (with its attachment when that lies
     * apart); returns {@link #COMPLETED}.
     */
    private int complete(SlabBuffer message, int frameLength, SlabBuffer attachment) {
        inMessage = false;
        queue.add(message, frameLength + withheldPartial, assemblingCharge, assemblingCompressed, assemblingSplit, attachment);
        withheldPartial = 0;
        assemblingCharge = 0;
        return COMPLETED;
    }

    /**
     * What a BEGIN frame of {@code len} bytes at {@code offset} charges a connection window of {@code window} bytes
     * whose peer keeps it (PROTOCOL.md "Flow control"); 0 for a frame that is not a BEGIN or has no length prefix.
     */
    public static int beginCharge(int flags, MemorySegment memory, long offset, int len, int window) {
        if ((flags & FrameFlags.BEGIN) == 0 || len < 4) {
            return 0;
        }
        long cost = 4 + Integer.toUnsignedLong(memory.get(INT, offset));
        if ((flags & FrameFlags.ATTACHMENT) != 0 && len >= 8) {
            cost += 4 + Integer.toUnsignedLong(memory.get(INT, offset + 4));
        }
        return FlowCapability.messageCharge(cost, len, window);
    }

    /** Whether messages are charged to the connection's window as their bytes arrive (its peer does not keep it). */
    private boolean chargedAsBytesArrive() {
        return connection != null && !connection.strict();
    }

    /**
     * Drops the message being received, which the connection window refused with a frame of {@code len} bytes: frees
     * what it holds and drops its later frames; returns {@link #OVER_WINDOW}.
     */
    private int dropForWindow(int len, boolean end) {
        releaseCharge();
        if (assembling != null) {
            assembling.release();
            assembling = null;
        }
        inMessage = false;
        discarding = !end;
        pendingCredit += len + withheldPartial;
        withheldPartial = 0;
        return OVER_WINDOW;
    }

    /** Charges {@code bytes} of the message being received to the connection's window; false when it refuses them. */
    private boolean chargeConnection(int bytes) {
        if (connection == null) {
            return true;
        }
        if (!connection.charge(bytes)) {
            refusal = connection.describeRefusal();
            return false;
        }
        assemblingCharge += bytes;
        return true;
    }

    /** Releases what the message being received was charged to the connection's window. */
    private void releaseCharge() {
        if (connection != null) {
            connection.release(assemblingCharge);
        }
        assemblingCharge = 0;
    }

    /** Why the connection window refused the last message ({@link #OVER_WINDOW}). */
    String refusal() {
        return refusal;
    }

    /**
     * Makes the message buffer hold at least {@code needed} bytes (all received), growing it to at most
     * {@link #GROWTH_FACTOR} times that and never past the announced size. Each growth at least doubles the buffer,
     * so the bytes copied by growing stay below the message's size.
     */
    private void ensureCapacity(int needed) {
        SlabBuffer old = assembling;
        if (old != null && old.capacity() >= needed) {
            return;
        }
        int want = (int) Math.min(expected, Math.max(1L, (long) needed * GROWTH_FACTOR));
        SlabBuffer grown = pool.allocate(want);
        if (old != null) {
            MemorySegment.copy(old.segment(), 0, grown.segment(), 0, assembled);
            old.release();
        }
        assembling = grown;
    }

    /**
     * Whether a frame of {@code frameLength} bytes is worth keeping in {@code holder} rather than copying: when it
     * fills at least half of the block. The block then costs at most twice the bytes the stream's window accounts
     * for, however long the application leaves the message queued, and no two kept frames share a block.
     */
    static boolean worthKeeping(int frameLength, SlabBuffer holder) {
        return 2L * frameLength >= holder.capacity();
    }

    /** Whether the last {@link #onFrame} queued a slice of its holder (kept a reference) instead of copying. */
    boolean keptHolder() {
        return keptHolder;
    }

    /** Capacity of the buffer of the message being reassembled, 0 when none (for tests). */
    int assemblingCapacity() {
        return assembling == null ? 0 : assembling.capacity();
    }

    /** Whether the last rejected message was rejected for its attachment (then {@link #rejectedSize()} is the attachment's). */
    boolean rejectedAttachment() {
        return rejectedAttachment;
    }

    /**
     * Where the message {@link #poll} returned last ends and its attachment begins (the buffer holds the message's
     * bytes then the attachment's), or -1 when it came without an attachment.
     */
    int polledSplit() {
        return queue.polledSplit();
    }

    /**
     * The attachment of the message {@link #poll} returned last when it was kept apart from the message's buffer (the
     * caller owns it then; the message's buffer holds only the message), or null when the attachment, if any, follows
     * the message in its buffer.
     */
    SlabBuffer polledAttachment() {
        return queue.polledAttachment();
    }

    /** Size announced by the last rejected message. */
    long rejectedSize() {
        return rejectedSize;
    }

    /** The application asked for more: credit the bytes of the message still arriving. */
    void onDemand() {
        pendingCredit += withheldPartial;
        withheldPartial = 0;
    }

    /** Whole messages waiting for the application. */
    int queued() {
        return queue.size();
    }

    boolean hasMessage() {
        return !queue.isEmpty();
    }

    /** Takes the oldest whole message (the caller owns it) and credits its bytes back. */
    SlabBuffer poll() {
        SlabBuffer b = queue.poll();
        if (b != null) {
            pendingCredit += queue.polledCredit();
            if (connection != null) {
                connection.release(queue.polledCharge());
            }
        }
        return b;
    }

    /** Slots of the ring of later messages (0 when it has none), for tests. */
    int queueCapacity() {
        return queue.ringCapacity();
    }

    /**
     * Credit to send to the peer now, or 0: returned once half the window is owed, so WINDOW
     * frames stay rare. The returned amount is added back to the receive window.
     */
    int takeCredit() {
        if (pendingCredit >= window / 2 || (pendingCredit > 0 && recvWindow < window / 2)) {
            int c = pendingCredit;
            pendingCredit = 0;
            recvWindow += c;
            return c;
        }
        return 0;
    }

    /** Whether the message the last {@link #poll} returned arrived with the COMPRESSED flag. */
    boolean polledCompressed() {
        return queue.polledCompressed();
    }

    /** Frees every buffered and partial message. */
    void releaseAll() {
        release(queue.releaseAll());
    }

    /** Frees the partial message and releases its charge and {@code queuedCharge} from the connection's window. */
    private void release(long queuedCharge) {
        if (assembling != null) {
            assembling.release();
            assembling = null;
        }
        inMessage = false;
        if (connection != null) {
            connection.release(queuedCharge + assemblingCharge);
        }
        assemblingCharge = 0;
    }

    /**
     * Frees what is held and returns to the state of a new instance, for the next stream that takes it from
     * {@link StreamParts}. The queue's ring is kept up to {@link MessageQueue#KEPT_SLOTS} slots.
     */
    void reset() {
        release(queue.reset());
        refusal = null;
        recvWindow = window;
        pendingCredit = 0;
        withheldPartial = 0;
        assemblingCompressed = false;
        assembled = 0;
        expected = 0;
        rejectedSize = 0;
        discarding = false;
        rejectedAttachment = false;
        streamAttachmentLimit = maxAttachmentSize;
        assemblingSplit = -1;
        keptHolder = false;
    }
}
