package acme.inventory.v1;

import acme.inventory.v1.InventoryOuterClass.Item;
import acme.inventory.v1.InventoryOuterClass.PutReply;
import acme.inventory.v1.InventoryOuterClass.ScanRequest;
import com.google.protobuf.Empty;
import dev.rdmarpc.core.StreamObserver;
import java.util.concurrent.ConcurrentSkipListMap;

/** An in-memory inventory: counts per SKU; every reply's total is the sum of all counts. */
final class InventoryService extends InventoryRpc.InventoryImplBase {
    private final ConcurrentSkipListMap<String, Item> items = new ConcurrentSkipListMap<>();

    private PutReply total() {
        return PutReply.newBuilder().setTotal(items.values().stream().mapToLong(Item::getCount).sum()).build();
    }

    @Override
    public void put(Item request, StreamObserver<PutReply> responses) {
        items.put(request.getSku(), request);
        responses.onNext(total());
        responses.onCompleted();
    }

    @Override
    public void count(Empty request, StreamObserver<PutReply> responses) {
        responses.onNext(total());
        responses.onCompleted();
    }

    @Override
    public void scan(ScanRequest request, StreamObserver<Item> responses) {
        send(request.getPrefix(), responses);
        responses.onCompleted();
    }

    private void send(String prefix, StreamObserver<Item> responses) {
        items.tailMap(prefix).entrySet().stream().takeWhile(e -> e.getKey().startsWith(prefix))
                .forEach(e -> responses.onNext(e.getValue()));
    }

    @Override
    public StreamObserver<Item> restock(StreamObserver<PutReply> responses) {
        return new StreamObserver<>() {
            @Override
            public void onNext(Item item) {
                items.put(item.getSku(), item);
            }

            @Override
            public void onError(Throwable t) {
            }

            @Override
            public void onCompleted() {
                responses.onNext(total());
                responses.onCompleted();
            }
        };
    }

    @Override
    public StreamObserver<ScanRequest> watch(StreamObserver<Item> responses) {
        return new StreamObserver<>() {
            @Override
            public void onNext(ScanRequest request) {
                send(request.getPrefix(), responses);
            }

            @Override
            public void onError(Throwable t) {
            }

            @Override
            public void onCompleted() {
                responses.onCompleted();
            }
        };
    }
}
