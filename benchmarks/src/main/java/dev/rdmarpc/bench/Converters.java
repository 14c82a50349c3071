package dev.rdmarpc.bench;

import picocli.CommandLine.ITypeConverter;
import picocli.CommandLine.TypeConversionException;

import java.time.Duration;
import java.util.Locale;

/** picocli converters for sizes and durations that answer bad values with one clear sentence. */
final class Converters {
    private Converters() {
    }

    /** A byte size: 64, 4k, 1m. */
    static final class SizeConverter implements ITypeConverter<Integer> {
        @Override
        public Integer convert(String value) {
            try {
                return Sizes.parse(value);
            } catch (IllegalArgumentException e) {
                throw new TypeConversionException(e.getMessage());
            }
        }
    }

    /** A duration: "2" or "2s" (seconds), "500ms", "1m", or ISO-8601 ("PT2S"). */
    static final class DurationConverter implements ITypeConverter<Duration> {
        @Override
        public Duration convert(String value) {
            String v = value.trim().toLowerCase(Locale.ROOT);
            try {
                Duration d;
                if (v.startsWith("pt")) {
                    d = Duration.parse(value.trim());
                } else if (v.endsWith("ms")) {
                    d = Duration.ofMillis(Long.parseLong(v.substring(0, v.length() - 2).trim()));
                } else if (v.endsWith("s")) {
                    d = Duration.ofMillis(Math.round(Double.parseDouble(v.substring(0, v.length() - 1).trim()) * 1000));
                } else if (v.endsWith("m")) {
                    d = Duration.ofMillis(Math.round(Double.parseDouble(v.substring(0, v.length() - 1).trim()) * 60_000));
                } else {
                    d = Duration.ofMillis(Math.round(Double.parseDouble(v) * 1000));
                }
                if (d.isNegative()) {
                    throw new TypeConversionException("negative duration '" + value + "'");
                }
                return d;
            } catch (RuntimeException e) {
                if (e instanceof TypeConversionException tce) {
                    throw tce;
                }
                throw new TypeConversionException("not a duration: '" + value + "' (examples: 2s, 500ms, 1m)");
            }
        }
    }
}
