package dev.rdmarpc.bench;

import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;

/** The JSON writer. */
class JsonTest {

    @Test
    void writesNestedValuesWithEscapesAndNullForNaN() {
        String s = new Json().beginObject()
                .field("a", "x\"y\n")
                .field("n", 12.0)
                .field("f", 0.123456789)
                .field("nan", Double.NaN)
                .key("arr").beginArray().value(1L).value(true).nullValue().endArray()
                .key("empty").beginObject().endObject()
                .endObject().toString();
        String compact = s.replaceAll("\\s+", "");
        assertEquals("{\"a\":\"x\\\"y\\n\",\"n\":12,\"f\":0.123457,\"nan\":null,\"arr\":[1,true,null],\"empty\":{}}", compact);
    }
}
