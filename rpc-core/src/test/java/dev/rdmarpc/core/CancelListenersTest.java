package dev.rdmarpc.core;

import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;

/** What a server call's context runs when it is cancelled: each listener once, removed ones never, late ones at once. */
class CancelListenersTest {
    @Test
    void firesEachListenerOnceAndNotTheRemovedOnes() {
        CancelListeners listeners = new CancelListeners();
        List<String> ran = new ArrayList<>();
        listeners.add(() -> ran.add("a"));
        Runnable removeB = listeners.add(() -> ran.add("b"));
        listeners.add(() -> ran.add("c"));
        removeB.run();
        listeners.fire();
        listeners.fire();
        assertEquals(List.of("a", "c"), ran);
    }

    @Test
    void aListenerAddedAfterTheCancelRunsAtOnce() {
        CancelListeners listeners = new CancelListeners();
        listeners.fire();
        List<String> ran = new ArrayList<>();
        Runnable remove = listeners.add(() -> ran.add("late"));
        assertEquals(List.of("late"), ran);
        remove.run(); // a no-op now
        listeners.fire();
        assertEquals(List.of("late"), ran);
    }
}
