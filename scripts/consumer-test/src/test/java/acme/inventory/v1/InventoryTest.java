package acme.inventory.v1;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import acme.inventory.v1.InventoryOuterClass.Item;
import acme.inventory.v1.InventoryOuterClass.PutReply;
import acme.inventory.v1.InventoryOuterClass.ScanRequest;
import com.google.protobuf.ByteString;
import com.google.protobuf.Empty;
import dev.rdmarpc.core.RpcChannel;
import dev.rdmarpc.core.RpcServer;
import dev.rdmarpc.core.Status;
import dev.rdmarpc.core.StatusException;
import dev.rdmarpc.core.StreamObserver;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** A never-seen service's generated stubs, all four call kinds, over TCP on loopback, and the default 4 MiB limit. */
class InventoryTest {
    private static final int DEFAULT_MAX_MESSAGE = 4 << 20;
    private static final long WAIT_SECONDS = 60;   // bounds a hung call only

    private RpcServer server;
    private RpcChannel channel;

    @BeforeEach
    void start() throws Exception {
        server = RpcServer.forPort(0).addService(new InventoryService()).build().start();
        channel = RpcChannel.forTarget("127.0.0.1:" + server.getPort()).build();
    }

    @AfterEach
    void stop() throws Exception {
        channel.close();
        server.close();
    }

    private InventoryRpc.InventoryBlockingStub blocking() {
        return InventoryRpc.newBlockingStub(channel).withDeadlineAfter(Duration.ofSeconds(WAIT_SECONDS));
    }

    private static Item item(String sku, long count) {
        return Item.newBuilder().setSku(sku).setCount(count)
                .setLocation(Item.Location.newBuilder().setAisle("A" + sku.length()).setShelf(3)).build();
    }

    @Test
    void unaryServerStreamingAndFutureCalls() throws Exception {
        assertEquals(5, blocking().put(item("bolt-1", 5)).getTotal());
        assertEquals(12, blocking().put(item("bolt-2", 7)).getTotal());
        blocking().put(item("nut-1", 1));

        List<String> bolts = new ArrayList<>();
        blocking().scan(ScanRequest.newBuilder().setPrefix("bolt-").build())
                .forEachRemaining(i -> bolts.add(i.getSku() + "@" + i.getLocation().getAisle()));
        assertEquals(List.of("bolt-1@A6", "bolt-2@A6"), bolts);

        PutReply count = InventoryRpc.newFutureStub(channel).count(Empty.getDefaultInstance())
                .get(WAIT_SECONDS, TimeUnit.SECONDS);
        assertEquals(13, count.getTotal());
    }

    @Test
    void clientStreamingAndBidiCalls() throws Exception {
        Received<PutReply> restocked = new Received<>();
        StreamObserver<Item> items = InventoryRpc.newStub(channel).restock(restocked);
        for (int i = 0; i < 100; i++) {
            items.onNext(item("washer-" + i, 2));
        }
        items.onCompleted();
        assertEquals(List.of(200L), restocked.done.get(WAIT_SECONDS, TimeUnit.SECONDS).stream()
                .map(PutReply::getTotal).toList());

        Received<Item> watched = new Received<>();
        StreamObserver<ScanRequest> prefixes = InventoryRpc.newStub(channel).watch(watched);
        prefixes.onNext(ScanRequest.newBuilder().setPrefix("washer-1").build());   // washer-1, washer-10..19
        prefixes.onNext(ScanRequest.newBuilder().setPrefix("washer-99").build());
        prefixes.onCompleted();
        assertEquals(12, watched.done.get(WAIT_SECONDS, TimeUnit.SECONDS).size());
    }

    @Test
    void requestsUpToTheDefaultFourMibPassAndLargerOnesAreResourceExhausted() {
        Item justUnder = item("big", 1).toBuilder().setLabel(ByteString.copyFrom(new byte[DEFAULT_MAX_MESSAGE - 64])).build();
        assertEquals(1, blocking().put(justUnder).getTotal());

        Item over = item("big", 1).toBuilder().setLabel(ByteString.copyFrom(new byte[DEFAULT_MAX_MESSAGE])).build();
        StatusException e = assertThrows(StatusException.class, () -> blocking().put(over));
        assertEquals(Status.Code.RESOURCE_EXHAUSTED, e.getStatus().getCode());
        assertEquals(1, blocking().count(Empty.getDefaultInstance()).getTotal(), "the refused call stored nothing");
    }

    /** Collects a call's responses; completes when the call ends. */
    private static final class Received<T> implements StreamObserver<T> {
        final List<T> values = new ArrayList<>();
        final CompletableFuture<List<T>> done = new CompletableFuture<>();

        @Override
        public synchronized void onNext(T value) {
            values.add(value);
        }

        @Override
        public synchronized void onError(Throwable t) {
            done.completeExceptionally(t);
        }

        @Override
        public synchronized void onCompleted() {
            done.complete(List.copyOf(values));
        }
    }
}
