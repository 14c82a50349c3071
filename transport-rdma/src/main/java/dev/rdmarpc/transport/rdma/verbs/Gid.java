package dev.rdmarpc.transport.rdma.verbs;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.Arrays;
import java.util.HexFormat;

/** A 16-byte GID ({@code union ibv_gid}); for RoCE v2 an IPv6 or IPv4-mapped address. */
public final class Gid {
    /** Size of a GID in bytes. */
    public static final int SIZE = 16;

    private final byte[] raw;

    private Gid(byte[] raw) {
        this.raw = raw;
    }

    /** A GID from its 16 raw (network-order) bytes. */
    public static Gid of(byte[] raw) {
        if (raw.length != SIZE) {
            throw new IllegalArgumentException("a GID has 16 bytes, got " + raw.length);
        }
        return new Gid(raw.clone());
    }

    static Gid read(MemorySegment segment, long offset) {
        byte[] raw = new byte[SIZE];
        MemorySegment.copy(segment, ValueLayout.JAVA_BYTE, offset, raw, 0, SIZE);
        return new Gid(raw);
    }

    void write(MemorySegment segment, long offset) {
        MemorySegment.copy(raw, 0, segment, ValueLayout.JAVA_BYTE, offset, SIZE);
    }

    /** The 16 raw bytes. */
    public byte[] raw() {
        return raw.clone();
    }

    /** Whether every byte is zero (an unused GID table entry). */
    public boolean isZero() {
        for (byte b : raw) {
            if (b != 0) {
                return false;
            }
        }
        return true;
    }

    /** Whether this is an IPv4-mapped IPv6 address ({@code ::ffff:a.b.c.d}), as RoCE v2 uses for IPv4. */
    public boolean isIpv4Mapped() {
        for (int i = 0; i < 10; i++) {
            if (raw[i] != 0) {
                return false;
            }
        }
        return raw[10] == (byte) 0xff && raw[11] == (byte) 0xff;
    }

    /** The GID in IPv6 notation, or {@code ::ffff:a.b.c.d} when IPv4-mapped. */
    @Override
    public String toString() {
        if (isIpv4Mapped()) {
            return "::ffff:" + (raw[12] & 0xff) + "." + (raw[13] & 0xff) + "." + (raw[14] & 0xff) + "." + (raw[15] & 0xff);
        }
        StringBuilder sb = new StringBuilder();
        for (int i = 0; i < SIZE; i += 2) {
            if (i > 0) {
                sb.append(':');
            }
            sb.append(HexFormat.of().toHexDigits((short) (((raw[i] & 0xff) << 8) | (raw[i + 1] & 0xff))));
        }
        return sb.toString();
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof Gid g && Arrays.equals(raw, g.raw);
    }

    @Override
    public int hashCode() {
        return Arrays.hashCode(raw);
    }
}
