package dev.rdmarpc.core.internal.connection;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.HashMap;
import java.util.HashSet;
import java.util.Map;
import java.util.Random;
import org.junit.jupiter.api.Test;

/** The int-keyed stream table agrees with a HashMap through random puts, conditional removes and growth. */
class StreamTableTest {

    @Test
    void agreesWithAHashMapUnderRandomOperations() {
        Random rnd = new Random(7);
        StreamTable<String> table = new StreamTable<>();
        Map<Integer, String> model = new HashMap<>();
        for (int op = 0; op < 200_000; op++) {
            // a small key range forces collisions, probe runs and deletions inside runs
            int key = 1 + rnd.nextInt(rnd.nextBoolean() ? 64 : 5_000);
            switch (rnd.nextInt(4)) {
                case 0, 1 -> {
                    String v = "v" + op;
                    table.put(key, v);
                    model.put(key, v);
                }
                case 2 -> {
                    String current = model.get(key);
                    assertEquals(current != null, table.remove(key, current), "remove " + key);
                    model.remove(key);
                }
                default -> assertFalse(table.remove(key, "not the value") && model.containsKey(key));
            }
            if (op % 1000 == 0) {
                for (int k = 1; k <= 64; k++) {
                    assertEquals(model.get(k), table.get(k), "key " + k + " after op " + op);
                }
            }
            assertEquals(model.size(), table.size());
        }
        for (Map.Entry<Integer, String> e : model.entrySet()) {
            assertEquals(e.getValue(), table.get(e.getKey()));
        }
        assertEquals(new HashSet<>(model.values()), new HashSet<>(table.snapshot()));
        assertEquals(model.size(), table.takeAll().size());
        assertTrue(table.isEmpty());
        assertNull(table.get(1));
    }

    @Test
    void idsMustBePositive() {
        StreamTable<String> table = new StreamTable<>();
        assertThrows(IllegalArgumentException.class, () -> table.put(0, "x"));
        assertThrows(IllegalArgumentException.class, () -> table.put(-3, "x"));
        table.put(Integer.MAX_VALUE, "max");
        assertEquals("max", table.get(Integer.MAX_VALUE));
    }
}
