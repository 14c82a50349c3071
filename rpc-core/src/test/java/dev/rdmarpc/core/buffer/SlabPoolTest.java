package dev.rdmarpc.core.buffer;

import dev.rdmarpc.core.protocol.FrameHeader;
import dev.rdmarpc.core.protocol.Frames;
import org.junit.jupiter.api.Test;

import java.lang.foreign.ValueLayout;
import java.util.ArrayList;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class SlabPoolTest {

    @Test
    void sizeClassesArePowersOfTwoFrom64() {
        assertEquals(0, SlabPool.classOf(0));
        assertEquals(0, SlabPool.classOf(64));
        assertEquals(1, SlabPool.classOf(65));
        assertEquals(2, SlabPool.classOf(256));
        assertEquals(8192, SlabPool.classSize(SlabPool.classOf(5000)));
        assertEquals(1 << 20, SlabPool.classSize(SlabPool.classOf(1 << 20)));
        assertEquals(SlabPool.MAX_BLOCK, SlabPool.classSize(SlabPool.CLASS_COUNT - 1));
    }

    @Test
    void allocateGivesPageAlignedSlabsAndReusesBlocks() {
        SlabPool pool = new SlabPool(0, true, 0);
        SlabBuffer a = pool.allocate(100);
        assertEquals(128, a.capacity());
        assertEquals(0, a.slab().address() % SlabPool.PAGE_SIZE);
        assertEquals(1, pool.inUseBuffers());
        a.segment().set(ValueLayout.JAVA_LONG, 0, 42L);
        assertTrue(a.release());
        assertEquals(0, pool.inUseBuffers());
        SlabBuffer b = pool.allocate(120);
        assertSame(a, b, "the freed handle is handed out again");
        assertEquals(0, b.length());
        b.release();
    }

    @Test
    void referenceCountingAndSlicesShareTheBlock() {
        SlabPool pool = new SlabPool(0, true, 0);
        SlabBuffer buf = pool.allocate(4096);
        buf.setLength(4096);
        SlabBuffer slice = buf.retainedSlice(100, 200);
        assertEquals(2, buf.refCnt());
        assertEquals(200, slice.length());
        assertEquals(buf.address() + 100, slice.address());
        assertFalse(buf.release());
        assertEquals(1, pool.inUseBuffers());
        assertTrue(slice.release());
        assertEquals(0, pool.inUseBuffers());
        assertThrows(IllegalStateException.class, slice::release);
        assertThrows(IllegalStateException.class, buf::release);
    }

    @Test
    void largeBlocksGetTheirOwnSlabAndAreFreedPastTheCacheBudget() {
        List<Slab> added = new ArrayList<>();
        List<Slab> removed = new ArrayList<>();
        SlabPool pool = new SlabPool(0, false, 0);
        pool.addListener(new SlabListener() {
            @Override
            public void onSlabAdded(Slab slab) {
                added.add(slab);
            }

            @Override
            public void onSlabRemoved(Slab slab) {
                removed.add(slab);
            }
        });
        SlabBuffer big = pool.allocate(3 << 20);
        assertEquals(4 << 20, big.capacity());
        assertEquals(1, added.size());
        assertSame(added.get(0), big.slab());
        big.release();
        assertEquals(List.of(added.get(0)), removed, "over the cache budget the slab is freed and listeners told");
        assertEquals(0, pool.slabCount());
    }

    @Test
    void listenersHearOfExistingSlabs() {
        SlabPool pool = new SlabPool(1 << 30, false, 0);
        pool.allocate(10).release();
        List<Slab> seen = new ArrayList<>();
        pool.addListener(new SlabListener() {
            @Override
            public void onSlabAdded(Slab slab) {
                seen.add(slab);
            }

            @Override
            public void onSlabRemoved(Slab slab) {
            }
        });
        assertEquals(1, seen.size());
    }

    @Test
    void leakTrackingNamesTheAllocationSite() {
        SlabPool pool = new SlabPool(0, true, 0);
        SlabBuffer b = pool.allocate(10);
        String report = pool.describeLiveBuffers();
        assertTrue(report.contains("leakTrackingNamesTheAllocationSite"), report);
        b.release();
        assertNotEquals(report, pool.describeLiveBuffers());
    }

    @Test
    void aControlFrameTakesTheSmallestBlock() {
        SlabPool pool = new SlabPool(0, true, 0);
        SlabBuffer window = Frames.window(pool, 1, 65536);
        assertEquals(FrameHeader.SIZE, window.length());
        assertEquals(SlabPool.MIN_BLOCK, window.capacity());
        assertEquals(64, window.capacity());
        assertEquals(0, window.address() % 64, "blocks are aligned to their size");
        window.release();
        assertEquals(0, pool.inUseBuffers());
    }

    @Test
    void rejectsImpossibleSizes() {
        SlabPool pool = new SlabPool(0, false, 0);
        assertThrows(IllegalArgumentException.class, () -> pool.allocate(-1));
        assertThrows(IllegalArgumentException.class, () -> pool.allocate(SlabPool.MAX_BLOCK + 1));
    }
}
