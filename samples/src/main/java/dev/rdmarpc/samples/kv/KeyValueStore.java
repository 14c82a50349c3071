package dev.rdmarpc.samples.kv;

import com.google.protobuf.ByteString;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentSkipListMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.Consumer;

/** The in-memory ordered map behind the sample service, with change listeners for Watch. */
public final class KeyValueStore {
    /** A stored value and its version. */
    public record Entry(ByteString value, long version) {
    }

    private final ConcurrentSkipListMap<ByteString, Entry> map =
            new ConcurrentSkipListMap<>(ByteString.unsignedLexicographicalComparator());
    private final CopyOnWriteArrayList<Consumer<WatchEvent>> listeners = new CopyOnWriteArrayList<>();

    /** Stores the value; returns the key's new version. */
    public long put(ByteString key, ByteString value) {
        Entry e = map.compute(key, (k, old) -> new Entry(value, old == null ? 1 : old.version() + 1));
        publish(WatchEvent.newBuilder().setKind(WatchEvent.Kind.PUT).setKey(key).setValue(value).setVersion(e.version()).build());
        return e.version();
    }

    public Entry get(ByteString key) {
        return map.get(key);
    }

    /** Removes the key; true if it existed. */
    public boolean delete(ByteString key) {
        Entry old = map.remove(key);
        if (old != null) {
            publish(WatchEvent.newBuilder().setKind(WatchEvent.Kind.DELETE).setKey(key).setVersion(old.version()).build());
        }
        return old != null;
    }

    /** Pairs with start <= key < end (empty bounds are open), at most limit (0 = all). */
    public List<KeyValuePair> scan(ByteString start, ByteString end, int limit) {
        Map<ByteString, Entry> range;
        if (start.isEmpty() && end.isEmpty()) {
            range = map;
        } else if (end.isEmpty()) {
            range = map.tailMap(start, true);
        } else if (start.isEmpty()) {
            range = map.headMap(end, false);
        } else if (ByteString.unsignedLexicographicalComparator().compare(start, end) >= 0) {
            return List.of();
        } else {
            range = map.subMap(start, true, end, false);
        }
        List<KeyValuePair> out = new ArrayList<>();
        for (Map.Entry<ByteString, Entry> e : range.entrySet()) {
            if (limit > 0 && out.size() >= limit) {
                break;
            }
            out.add(KeyValuePair.newBuilder().setKey(e.getKey()).setValue(e.getValue().value()).setVersion(e.getValue().version()).build());
        }
        return out;
    }

    public int size() {
        return map.size();
    }

    public void addListener(Consumer<WatchEvent> l) {
        listeners.add(l);
    }

    public void removeListener(Consumer<WatchEvent> l) {
        listeners.remove(l);
    }

    private void publish(WatchEvent event) {
        for (Consumer<WatchEvent> l : listeners) {
            l.accept(event);
        }
    }
}
