package dev.rdmarpc.transport.rdma.verbs;

import java.lang.foreign.AddressLayout;
import java.lang.foreign.GroupLayout;
import java.lang.foreign.MemoryLayout;
import java.lang.foreign.MemoryLayout.PathElement;
import java.lang.foreign.SequenceLayout;
import java.lang.foreign.StructLayout;
import java.lang.foreign.UnionLayout;
import java.lang.foreign.ValueLayout;
import java.nio.ByteOrder;
import java.util.ArrayList;
import java.util.List;

/**
 * Builds C struct layouts the way the C compiler does (natural alignment, inserted padding) from named
 * fields, so the layout classes read like the header; the layout test checks them against gcc.
 * <p>Field names are the C member names. A C anonymous union is given a Java name starting with
 * {@value #ANONYMOUS_PREFIX}; that path element is left out of the C member designator.
 */
final class CLayouts {
    /** Prefix of the Java name of a member that is anonymous in C. */
    static final String ANONYMOUS_PREFIX = "_anon";

    static final ValueLayout.OfByte U8 = ValueLayout.JAVA_BYTE;
    static final ValueLayout.OfShort U16 = ValueLayout.JAVA_SHORT;
    static final ValueLayout.OfInt U32 = ValueLayout.JAVA_INT;
    static final ValueLayout.OfInt S32 = ValueLayout.JAVA_INT;
    static final ValueLayout.OfLong U64 = ValueLayout.JAVA_LONG;
    static final ValueLayout.OfLong SIZE_T = ValueLayout.JAVA_LONG;
    static final ValueLayout.OfInt BE32 = ValueLayout.JAVA_INT.withOrder(ByteOrder.BIG_ENDIAN);
    static final ValueLayout.OfLong BE64 = ValueLayout.JAVA_LONG.withOrder(ByteOrder.BIG_ENDIAN);
    static final AddressLayout PTR = ValueLayout.ADDRESS;

    private CLayouts() {
    }

    static MemoryLayout u8(String name) {
        return U8.withName(name);
    }

    static MemoryLayout u16(String name) {
        return U16.withName(name);
    }

    static MemoryLayout u32(String name) {
        return U32.withName(name);
    }

    static MemoryLayout s32(String name) {
        return S32.withName(name);
    }

    static MemoryLayout u64(String name) {
        return U64.withName(name);
    }

    static MemoryLayout be32(String name) {
        return BE32.withName(name);
    }

    static MemoryLayout be64(String name) {
        return BE64.withName(name);
    }

    static MemoryLayout sizeT(String name) {
        return SIZE_T.withName(name);
    }

    static MemoryLayout ptr(String name) {
        return PTR.withName(name);
    }

    static MemoryLayout chars(String name, int length) {
        return MemoryLayout.sequenceLayout(length, U8).withName(name);
    }

    /** A C struct: members at their natural alignment, padded at the end to the struct's alignment. */
    static StructLayout struct(String name, MemoryLayout... members) {
        return build(name, true, members);
    }

    /** The leading members of a C struct the binding reads but never allocates (no trailing padding). */
    static StructLayout structPrefix(String name, MemoryLayout... members) {
        return build(name, false, members);
    }

    /** A C union, sized like C (largest member rounded up to the largest alignment). */
    static UnionLayout union(String name, MemoryLayout... members) {
        long size = 0;
        long align = 1;
        for (MemoryLayout m : members) {
            size = Math.max(size, m.byteSize());
            align = Math.max(align, m.byteAlignment());
        }
        long rounded = roundUp(size, align);
        List<MemoryLayout> all = new ArrayList<>(List.of(members));
        if (rounded > size) {
            all.add(MemoryLayout.paddingLayout(rounded));
        }
        return MemoryLayout.unionLayout(all.toArray(MemoryLayout[]::new)).withName(name);
    }

    private static StructLayout build(String name, boolean padTail, MemoryLayout... members) {
        List<MemoryLayout> out = new ArrayList<>();
        long offset = 0;
        long align = 1;
        for (MemoryLayout m : members) {
            long a = m.byteAlignment();
            align = Math.max(align, a);
            long aligned = roundUp(offset, a);
            if (aligned > offset) {
                out.add(MemoryLayout.paddingLayout(aligned - offset));
            }
            out.add(m);
            offset = aligned + m.byteSize();
        }
        if (padTail) {
            long end = roundUp(offset, align);
            if (end > offset) {
                out.add(MemoryLayout.paddingLayout(end - offset));
            }
        }
        return MemoryLayout.structLayout(out.toArray(MemoryLayout[]::new)).withName(name);
    }

    private static long roundUp(long value, long align) {
        return (value + align - 1) / align * align;
    }

    /** Byte offset of a dotted member path, e.g. {@code "wr.rdma.rkey"}, Java names. */
    static long offset(MemoryLayout root, String path) {
        return root.byteOffset(elements(path));
    }

    /** Size in bytes of the member at a dotted path. */
    static long size(MemoryLayout root, String path) {
        return root.select(elements(path)).byteSize();
    }

    private static PathElement[] elements(String path) {
        String[] parts = path.split("\\.");
        PathElement[] elements = new PathElement[parts.length];
        for (int i = 0; i < parts.length; i++) {
            elements[i] = PathElement.groupElement(parts[i]);
        }
        return elements;
    }

    /** One named member of a layout: Java path, C member designator, offset and size. */
    record Member(String javaPath, String cDesignator, long offset, long size) {
    }

    /** Every named member (nested ones too) of a layout, in declaration order. */
    static List<Member> members(GroupLayout root) {
        List<Member> out = new ArrayList<>();
        collect(root, "", "", 0, out);
        return out;
    }

    private static void collect(GroupLayout group, String javaPrefix, String cPrefix, long base, List<Member> out) {
        long offset = 0;
        for (MemoryLayout m : group.memberLayouts()) {
            long here = group instanceof StructLayout ? base + offset : base;
            if (m.name().isPresent()) {
                String name = m.name().get();
                String javaPath = javaPrefix + name;
                boolean anonymous = name.startsWith(ANONYMOUS_PREFIX);
                String cPath = anonymous ? cPrefix : cPrefix + name;
                if (!anonymous) {
                    out.add(new Member(javaPath, cPath, here, m.byteSize()));
                }
                if (m instanceof GroupLayout g) {
                    collect(g, javaPath + ".", anonymous ? cPrefix : cPath + ".", here, out);
                } else if (m instanceof SequenceLayout) {
                    // arrays are checked as a whole
                }
            }
            if (group instanceof StructLayout) {
                offset += m.byteSize();
            }
        }
    }
}
