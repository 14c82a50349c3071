package dev.rdmarpc.core.internal.call;

import dev.rdmarpc.core.StreamObserver;

import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertNotNull;

/** Records every callback of a unary call's observer in order: "next:" and the value, the error, or "completed". */
final class RecordingObserver implements StreamObserver<String> {
    final BlockingQueue<Object> events = new LinkedBlockingQueue<>();

    @Override
    public void onNext(String value) {
        events.add("next:" + value);
    }

    @Override
    public void onError(Throwable t) {
        events.add(t);
    }

    @Override
    public void onCompleted() {
        events.add("completed");
    }

    /** The next callback, waiting up to a bound that only ends a hung test. */
    Object next() throws InterruptedException {
        Object e = events.poll(60, TimeUnit.SECONDS);
        assertNotNull(e, "no callback");
        return e;
    }
}
