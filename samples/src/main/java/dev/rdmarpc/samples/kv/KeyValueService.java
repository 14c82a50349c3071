package dev.rdmarpc.samples.kv;

import com.google.protobuf.ByteString;
import dev.rdmarpc.core.ServerCallStreamObserver;
import dev.rdmarpc.core.Status;
import dev.rdmarpc.core.StreamObserver;

import java.util.List;

/** The key-value service: Put, Get, Delete, Scan (server streaming), BatchPut (client streaming), Watch (bidi). */
public final class KeyValueService extends KeyValueRpc.KeyValueImplBase {
    /** Largest value the service stores. */
    public static final int MAX_VALUE_SIZE = 16 << 20;

    private final KeyValueStore store;
    private final int maxQueuedWatchEvents;

    public KeyValueService(KeyValueStore store) {
        this(store, WatchSubscriber.DEFAULT_MAX_QUEUED_EVENTS);
    }

    /** A service whose Watch subscribers may fall {@code maxQueuedWatchEvents} events behind before they are dropped. */
    public KeyValueService(KeyValueStore store, int maxQueuedWatchEvents) {
        if (maxQueuedWatchEvents <= 0) {
            throw new IllegalArgumentException("maxQueuedWatchEvents must be positive: " + maxQueuedWatchEvents);
        }
        this.store = store;
        this.maxQueuedWatchEvents = maxQueuedWatchEvents;
    }

    private static boolean invalid(ByteString key, ByteString value, StreamObserver<?> obs) {
        if (key.isEmpty()) {
            obs.onError(Status.INVALID_ARGUMENT.withDescription("key must not be empty").asException());
            return true;
        }
        if (value != null && value.size() > MAX_VALUE_SIZE) {
            obs.onError(Status.INVALID_ARGUMENT.withDescription("value of " + value.size() + " bytes is over the "
                    + MAX_VALUE_SIZE + "-byte limit").asException());
            return true;
        }
        return false;
    }

    @Override
    public void put(PutRequest request, StreamObserver<PutResponse> obs) {
        if (invalid(request.getKey(), request.getValue(), obs)) {
            return;
        }
        long version = store.put(request.getKey(), request.getValue());
        obs.onNext(PutResponse.newBuilder().setVersion(version).build());
        obs.onCompleted();
    }

    @Override
    public void get(GetRequest request, StreamObserver<GetResponse> obs) {
        if (invalid(request.getKey(), null, obs)) {
            return;
        }
        KeyValueStore.Entry e = store.get(request.getKey());
        if (e == null) {
            obs.onError(Status.NOT_FOUND.withDescription("no key " + request.getKey().toStringUtf8()).asException());
            return;
        }
        obs.onNext(GetResponse.newBuilder().setValue(e.value()).setVersion(e.version()).build());
        obs.onCompleted();
    }

    @Override
    public void delete(DeleteRequest request, StreamObserver<DeleteResponse> obs) {
        if (invalid(request.getKey(), null, obs)) {
            return;
        }
        obs.onNext(DeleteResponse.newBuilder().setExisted(store.delete(request.getKey())).build());
        obs.onCompleted();
    }

    @Override
    public void scan(ScanRequest request, StreamObserver<KeyValuePair> obs) {
        if (request.getLimit() < 0) {
            obs.onError(Status.INVALID_ARGUMENT.withDescription("limit must not be negative").asException());
            return;
        }
        List<KeyValuePair> pairs = store.scan(request.getStart(), request.getEnd(), request.getLimit());
        ServerCallStreamObserver<KeyValuePair> sobs = (ServerCallStreamObserver<KeyValuePair>) obs;
        for (KeyValuePair p : pairs) {
            if (sobs.isCancelled()) {
                return;
            }
            obs.onNext(p);
        }
        obs.onCompleted();
    }

    @Override
    public StreamObserver<PutRequest> batchPut(StreamObserver<BatchPutResponse> obs) {
        return new StreamObserver<>() {
            private long count;
            private boolean failed;

            @Override
            public void onNext(PutRequest request) {
                if (failed) {
                    return;
                }
                if (invalid(request.getKey(), request.getValue(), obs)) {
                    failed = true;
                    return;
                }
                store.put(request.getKey(), request.getValue());
                count++;
            }

            @Override
            public void onError(Throwable t) {
                // the client gave up; what was stored stays stored
            }

            @Override
            public void onCompleted() {
                if (!failed) {
                    obs.onNext(BatchPutResponse.newBuilder().setCount(count).build());
                    obs.onCompleted();
                }
            }
        };
    }

    /**
     * Watch: every change under the prefixes the client names, sent through the subscriber's own bounded queue (see
     * {@link WatchSubscriber}) so that a subscriber that does not read never holds up a writer's Put.
     */
    @Override
    public StreamObserver<WatchRequest> watch(StreamObserver<WatchEvent> obs) {
        return WatchSubscriber.start(store, obs, maxQueuedWatchEvents);
    }
}
