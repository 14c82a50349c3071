package dev.rdmarpc.core.protocol;

import java.lang.foreign.MemorySegment;

/**
 * The {@link Hello#CAP_FLOW} capability block (PROTOCOL.md "Flow control"): the sender's connection window, what the
 * peer's messages may hold on it at once (0 for none), and whether the sender keeps the peer's connection window when
 * it sends ({@link #KEEPS_PEER_WINDOW}: it takes each message's charge, at least {@link #MIN_MESSAGE_CHARGE} bytes,
 * before sending it). 8 bytes, little-endian: version (1 byte, 1), flags (1 byte), two reserved bytes (0), the
 * connection window (4 bytes, 0..2^31-1). A HELLO without the block (a peer of an earlier release) advertises no
 * connection window and does not keep the peer's.
 *
 * @param keepsPeerWindow  whether the sender of the block keeps its peer's connection window when sending
 * @param connectionWindow bytes of messages the sender of the block holds for its peer at once, 0 for no limit
 */
public record FlowCapability(boolean keepsPeerWindow, int connectionWindow) {
    /** Flag: the sender of the block keeps its peer's connection window when sending. */
    public static final int KEEPS_PEER_WINDOW = 1;
    /** Encoded size of the block. */
    public static final int SIZE = 8;
    /** Layout version of the block. */
    public static final int VERSION = 1;
    /**
     * The least a message counts against a connection window, whatever its size: a queued message holds at least a
     * 64-byte buffer and a slot of the queue it waits in, so a window of empty messages is charged what they cost.
     */
    public static final int MIN_MESSAGE_CHARGE = 128;

    /** Checks the window: not negative. */
    public FlowCapability {
        if (connectionWindow < 0) {
            throw new IllegalArgumentException("connection window " + connectionWindow + " is negative");
        }
    }

    /** The block as sent in a HELLO. */
    public byte[] encode() {
        byte[] out = new byte[SIZE];
        new WireWriter(MemorySegment.ofArray(out), 0).u8(VERSION).u8(keepsPeerWindow ? KEEPS_PEER_WINDOW : 0).u16(0)
                .i32(connectionWindow);
        return out;
    }

    /** The block a peer's HELLO carries, or null when it carries none; a malformed block is a protocol error. */
    public static FlowCapability of(Hello hello) {
        byte[] block = hello.capabilities().get(Hello.CAP_FLOW);
        return block == null ? null : decode(block);
    }

    /** Parses and checks a block: its size, version, flags, reserved bytes and window. */
    public static FlowCapability decode(byte[] block) {
        if (block.length != SIZE) {
            throw new ProtocolException("HELLO flow block (capability " + Hello.CAP_FLOW + ") has " + block.length
                    + " bytes, expected " + SIZE);
        }
        WireReader r = new WireReader(MemorySegment.ofArray(block), "HELLO flow block");
        int version = r.u8();
        if (version != VERSION) {
            throw new ProtocolException("HELLO flow block has version " + version + ", this side reads version " + VERSION);
        }
        int flags = r.u8();
        if ((flags & ~KEEPS_PEER_WINDOW) != 0) {
            throw new ProtocolException("HELLO flow block has unknown flags 0x" + Integer.toHexString(flags));
        }
        if (r.u16() != 0) {
            throw new ProtocolException("HELLO flow block has non-zero reserved bytes");
        }
        int window = r.i32();
        r.end();
        if (window < 0) {
            throw new ProtocolException("HELLO flow block advertises a connection window of " + window
                    + " bytes (must be 0 to 2^31-1)");
        }
        return new FlowCapability((flags & KEEPS_PEER_WINDOW) != 0, window);
    }

    /**
     * What a message counts against its receiver's connection window of {@code window} bytes: {@code cost}, the
     * payload bytes of all its frames (length prefix, attachment length, message and attachment bytes), at least
     * {@link #MIN_MESSAGE_CHARGE}; a message whose cost exceeds the whole window (larger than its receiver accepts,
     * which refuses it) counts only its BEGIN frame's {@code beginPayload}, at least the minimum.
     */
    public static int messageCharge(long cost, int beginPayload, int window) {
        long charged = cost <= window ? cost : beginPayload;
        return (int) Math.max(charged, MIN_MESSAGE_CHARGE);
    }
}
