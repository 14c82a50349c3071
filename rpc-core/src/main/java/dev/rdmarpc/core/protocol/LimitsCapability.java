package dev.rdmarpc.core.protocol;

import java.lang.foreign.MemorySegment;

/**
 * The {@link Hello#CAP_LIMITS} capability block: the limits the sender of a HELLO enforces on what it receives, so
 * the peer can respect them instead of being refused. 12 bytes, little-endian: version (1 byte, 1), three reserved
 * bytes (0), the most streams the peer may have open to the sender at once (4 bytes, 0..2^31-1; a client sends 0,
 * since servers open no streams), and the most metadata bytes one HEADERS or TRAILERS may carry (4 bytes,
 * 1..2^31-1, counted as {@link Frames#metadataBytes}). A 16-byte block adds the most attachment bytes one message
 * to the sender may carry (4 bytes, 0..2^31-1, see {@link FrameFlags#ATTACHMENT}); a 12-byte block, or a HELLO
 * without the block, says the sender takes no attachments. A HELLO without the block advertises no other limit.
 *
 * @param maxConcurrentStreams streams the receiver of the block may have open to its sender at once
 * @param maxMetadataBytes     metadata bytes the sender accepts in one HEADERS or TRAILERS
 * @param maxAttachmentBytes   attachment bytes the sender accepts with one message, or {@link #NO_ATTACHMENTS}
 */
public record LimitsCapability(int maxConcurrentStreams, int maxMetadataBytes, int maxAttachmentBytes) {
    /** Encoded size of the block without the attachment limit. */
    public static final int SIZE = 12;
    /** Encoded size of the block with the attachment limit. */
    public static final int SIZE_WITH_ATTACHMENTS = 16;
    /** {@link #maxAttachmentBytes()} of a peer that takes no attachments (its block has no attachment limit). */
    public static final int NO_ATTACHMENTS = -1;
    /** Layout version of the block. */
    public static final int VERSION = 1;
    /** What a peer whose HELLO carries no block is taken to accept. */
    public static final LimitsCapability NONE = new LimitsCapability(Integer.MAX_VALUE, Integer.MAX_VALUE);

    /** Limits without an attachment limit: the sender of the block takes no attachments. */
    public LimitsCapability(int maxConcurrentStreams, int maxMetadataBytes) {
        this(maxConcurrentStreams, maxMetadataBytes, NO_ATTACHMENTS);
    }

    /** Checks the values: both non-negative, and at least one metadata byte. */
    public LimitsCapability {
        if (maxAttachmentBytes < NO_ATTACHMENTS) {
            throw new IllegalArgumentException("max attachment bytes " + maxAttachmentBytes + " is negative");
        }
        if (maxConcurrentStreams < 0) {
            throw new IllegalArgumentException("max concurrent streams " + maxConcurrentStreams + " is negative");
        }
        if (maxMetadataBytes <= 0) {
            throw new IllegalArgumentException("max metadata bytes " + maxMetadataBytes + " must be positive");
        }
    }

    /** The block as sent in a HELLO. */
    public byte[] encode() {
        boolean attachments = acceptsAttachments();
        byte[] out = new byte[attachments ? SIZE_WITH_ATTACHMENTS : SIZE];
        WireWriter w = new WireWriter(MemorySegment.ofArray(out), 0).u8(VERSION).u8(0).u16(0).i32(maxConcurrentStreams)
                .i32(maxMetadataBytes);
        if (attachments) {
            w.i32(maxAttachmentBytes);
        }
        return out;
    }

    /** Whether the sender of the block takes attachments (up to {@link #maxAttachmentBytes()} each). */
    public boolean acceptsAttachments() {
        return maxAttachmentBytes != NO_ATTACHMENTS;
    }

    /** The limits a peer's HELLO advertises, {@link #NONE} when it carries no block; a malformed block is a protocol error. */
    public static LimitsCapability of(Hello hello) {
        byte[] block = hello.capabilities().get(Hello.CAP_LIMITS);
        return block == null ? NONE : decode(block);
    }

    /** Parses and checks a block: its size, version, reserved bytes and values. */
    public static LimitsCapability decode(byte[] block) {
        if (block.length != SIZE && block.length != SIZE_WITH_ATTACHMENTS) {
            throw new ProtocolException("HELLO limits block (capability " + Hello.CAP_LIMITS + ") has " + block.length
                    + " bytes, expected " + SIZE + " or " + SIZE_WITH_ATTACHMENTS);
        }
        WireReader r = new WireReader(MemorySegment.ofArray(block), "HELLO limits block");
        int version = r.u8();
        if (version != VERSION) {
            throw new ProtocolException("HELLO limits block has version " + version + ", this side reads version " + VERSION);
        }
        if (r.u8() != 0 || r.u16() != 0) {
            throw new ProtocolException("HELLO limits block has non-zero reserved bytes");
        }
        int streams = r.i32();
        int metadata = r.i32();
        int attachments = block.length == SIZE_WITH_ATTACHMENTS ? r.i32() : NO_ATTACHMENTS;
        r.end();
        if (block.length == SIZE_WITH_ATTACHMENTS && attachments < 0) {
            throw new ProtocolException("HELLO limits block advertises " + attachments
                    + " attachment bytes (must be 0 to 2^31-1)");
        }
        if (streams < 0) {
            throw new ProtocolException("HELLO limits block advertises " + streams + " concurrent streams (must be 0 to 2^31-1)");
        }
        if (metadata <= 0) {
            throw new ProtocolException("HELLO limits block advertises " + metadata + " metadata bytes (must be 1 to 2^31-1)");
        }
        return new LimitsCapability(streams, metadata, attachments);
    }
}
