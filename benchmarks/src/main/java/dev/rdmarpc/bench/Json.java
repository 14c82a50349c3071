package dev.rdmarpc.bench;

import java.math.BigDecimal;
import java.math.MathContext;
import java.util.Locale;

/** A small streaming JSON writer (objects, arrays, strings, numbers; NaN and infinities become null). */
final class Json {
    private final StringBuilder out = new StringBuilder();
    private final boolean[] needComma = new boolean[64];
    private int depth;
    private boolean afterKey;

    Json beginObject() {
        value();
        out.append('{');
        push();
        return this;
    }

    Json endObject() {
        pop('}');
        return this;
    }

    Json beginArray() {
        value();
        out.append('[');
        push();
        return this;
    }

    Json endArray() {
        pop(']');
        return this;
    }

    Json key(String k) {
        if (needComma[depth]) {
            out.append(',');
        }
        needComma[depth] = true;
        newline();
        string(k);
        out.append(": ");
        afterKey = true;
        return this;
    }

    Json value(String s) {
        value();
        if (s == null) {
            out.append("null");
        } else {
            string(s);
        }
        return this;
    }

    Json value(double d) {
        value();
        if (Double.isNaN(d) || Double.isInfinite(d)) {
            out.append("null");
        } else if (d == Math.rint(d) && Math.abs(d) < 1e15) {
            out.append((long) d);
        } else {
            out.append(new BigDecimal(d).round(new MathContext(6)).stripTrailingZeros().toPlainString());
        }
        return this;
    }

    Json value(long v) {
        value();
        out.append(v);
        return this;
    }

    Json value(boolean b) {
        value();
        out.append(b);
        return this;
    }

    Json nullValue() {
        value();
        out.append("null");
        return this;
    }

    Json field(String k, String v) {
        return key(k).value(v);
    }

    Json field(String k, double v) {
        return key(k).value(v);
    }

    Json field(String k, long v) {
        return key(k).value(v);
    }

    Json field(String k, boolean v) {
        return key(k).value(v);
    }

    private void value() {
        if (afterKey) {
            afterKey = false;
            return;
        }
        if (depth > 0) {
            if (needComma[depth]) {
                out.append(',');
            }
            needComma[depth] = true;
            newline();
        }
    }

    private void push() {
        depth++;
        needComma[depth] = false;
    }

    private void pop(char c) {
        boolean any = needComma[depth];
        depth--;
        if (any) {
            newline();
        }
        out.append(c);
    }

    private void newline() {
        out.append('\n');
        out.append("  ".repeat(depth));
    }

    private void string(String s) {
        out.append('"');
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            switch (c) {
                case '"' -> out.append("\\\"");
                case '\\' -> out.append("\\\\");
                case '\n' -> out.append("\\n");
                case '\r' -> out.append("\\r");
                case '\t' -> out.append("\\t");
                default -> {
                    if (c < 0x20) {
                        out.append(String.format(Locale.ROOT, "\\u%04x", (int) c));
                    } else {
                        out.append(c);
                    }
                }
            }
        }
        out.append('"');
    }

    @Override
    public String toString() {
        return out.append('\n').toString();
    }
}
