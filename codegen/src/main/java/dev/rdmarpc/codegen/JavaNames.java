package dev.rdmarpc.codegen;

import com.google.protobuf.DescriptorProtos;
import com.google.protobuf.DescriptorProtos.DescriptorProto;
import com.google.protobuf.DescriptorProtos.Edition;
import com.google.protobuf.DescriptorProtos.EnumDescriptorProto;
import com.google.protobuf.DescriptorProtos.FeatureSet;
import com.google.protobuf.DescriptorProtos.FileDescriptorProto;
import com.google.protobuf.DescriptorProtos.ServiceDescriptorProto;
import com.google.protobuf.JavaFeaturesProto;

import java.util.Set;

/**
 * The Java naming rules of protoc's Java generator (for the names of generated message classes)
 * and of grpc-java (for the names of service methods), re-implemented over descriptor protos.
 */
final class JavaNames {

    /** Words that cannot be Java identifiers; a method name equal to one gets a trailing underscore. */
    private static final Set<String> RESERVED = Set.of(
            "abstract", "assert", "boolean", "break", "byte", "case", "catch", "char", "class", "const",
            "continue", "default", "do", "double", "else", "enum", "extends", "final", "finally", "float",
            "for", "goto", "if", "implements", "import", "instanceof", "int", "interface", "long", "native",
            "new", "package", "private", "protected", "public", "return", "short", "static", "strictfp",
            "super", "switch", "synchronized", "this", "throw", "throws", "transient", "try", "void",
            "volatile", "while", "true", "false", "null", "_");

    /** Appended to the default outer class name when a type of the file has the same name. */
    private static final String OUTER_CLASS_SUFFIX = "OuterClass";

    static {
        // DescriptorProtos must be initialized before JavaFeaturesProto, or DescriptorProtos' static
        // initializer reads pb.java before it is set and fails (protocolbuffers/protobuf#23790).
        DescriptorProtos.getDescriptor();
    }

    private JavaNames() {
    }

    /** The Java package of a file's classes: {@code java_package}, else the proto package (may be empty). */
    static String javaPackage(FileDescriptorProto file) {
        if (file.getOptions().hasJavaPackage()) {
            return file.getOptions().getJavaPackage();
        }
        return file.getPackage();
    }

    /**
     * The simple name of a file's outer class: {@code java_outer_classname}, else the camel-cased
     * file base name, with "OuterClass" appended when a message, enum or service has that name
     * (before edition 2024), or with "Proto" appended (edition 2024 on).
     */
    static String outerClassName(FileDescriptorProto file) {
        if (file.getOptions().hasJavaOuterClassname()) {
            return file.getOptions().getJavaOuterClassname();
        }
        String name = file.getName();
        String base = name.substring(name.lastIndexOf('/') + 1);
        if (base.endsWith(".protodevel")) {
            base = base.substring(0, base.length() - ".protodevel".length());
        } else if (base.endsWith(".proto")) {
            base = base.substring(0, base.length() - ".proto".length());
        }
        String candidate = underscoresToCamelCase(base);
        if (isEdition2024OrLater(file)) {
            return candidate + "Proto";
        }
        return hasTypeNamed(file, candidate) ? candidate + OUTER_CLASS_SUFFIX : candidate;
    }

    /** Whether a top-level or nested message, enum, or a service of the file is named exactly so. */
    static boolean hasTypeNamed(FileDescriptorProto file, String name) {
        for (EnumDescriptorProto e : file.getEnumTypeList()) {
            if (e.getName().equals(name)) {
                return true;
            }
        }
        for (ServiceDescriptorProto s : file.getServiceList()) {
            if (s.getName().equals(name)) {
                return true;
            }
        }
        for (DescriptorProto m : file.getMessageTypeList()) {
            if (messageHasTypeNamed(m, name)) {
                return true;
            }
        }
        return false;
    }

    private static boolean messageHasTypeNamed(DescriptorProto message, String name) {
        if (message.getName().equals(name)) {
            return true;
        }
        for (DescriptorProto nested : message.getNestedTypeList()) {
            if (messageHasTypeNamed(nested, name)) {
                return true;
            }
        }
        for (EnumDescriptorProto e : message.getEnumTypeList()) {
            if (e.getName().equals(name)) {
                return true;
            }
        }
        return false;
    }

    /**
     * The prefix of the Java name of a top-level message: the package when the message gets its own
     * file, else the package plus the outer class.
     */
    static String typePrefix(FileDescriptorProto file, DescriptorProto topLevelMessage) {
        String pkg = javaPackage(file);
        return inOwnFile(file, topLevelMessage.getOptions().getFeatures()) ? pkg : join(pkg, outerClassName(file));
    }

    /**
     * Whether a top-level message or enum with these features is a top-level Java class of its own. Before edition
     * 2024 the file's {@code java_multiple_files} decides; from 2024 on the type's
     * {@code features.(pb.java).nest_in_file_class}, which defaults to NO.
     */
    static boolean inOwnFile(FileDescriptorProto file, FeatureSet features) {
        boolean ownFile = file.getOptions().getJavaMultipleFiles();
        if (!isEdition2024OrLater(file)) {
            return ownFile;
        }
        return switch (features.getExtension(JavaFeaturesProto.java_).getNestInFileClass()) {
            case YES -> false;
            case LEGACY -> ownFile;
            default -> true;
        };
    }

    /** Whether the file is in edition 2024 or later (proto2 and proto3 files have no edition set). */
    static boolean isEdition2024OrLater(FileDescriptorProto file) {
        Edition edition = file.getEdition();
        return edition.getNumber() >= Edition.EDITION_2024_VALUE
                && edition != Edition.EDITION_MAX && edition != Edition.EDITION_UNKNOWN;
    }

    /** protoc's file-name camel case: drop non-alphanumerics, capitalize the first letter and letters after them or digits. */
    static String underscoresToCamelCase(String input) {
        StringBuilder out = new StringBuilder(input.length());
        boolean capNext = true;
        for (int i = 0; i < input.length(); i++) {
            char c = input.charAt(i);
            if (c >= 'a' && c <= 'z') {
                out.append(capNext ? (char) (c - 'a' + 'A') : c);
                capNext = false;
            } else if (c >= 'A' && c <= 'Z') {
                out.append(c);
                capNext = false;
            } else if (c >= '0' && c <= '9') {
                out.append(c);
                capNext = true;
            } else {
                capNext = true;
            }
        }
        return out.toString();
    }

    /**
     * grpc-java's Java method name for an rpc: first letter lower-cased, underscores dropped with the
     * letter after each upper-cased, and a trailing underscore on a reserved word
     * ({@code BatchPut} becomes {@code batchPut}, {@code get_all} {@code getAll}, {@code Import} {@code import_}).
     * Names of {@code Object}'s methods stay as they are: every generated method takes a request or an observer,
     * so {@code hashCode(request, observer)} only overloads {@code hashCode()}, as in grpc-java's stubs.
     */
    static String methodName(String rpcName) {
        String name = lowerCamel(rpcName);
        return RESERVED.contains(name) ? name + "_" : name;
    }

    /**
     * grpc-java's name of the static getter of an rpc's method descriptor: {@code get_<rpc>_method} lower-camel-cased
     * as {@link #methodName} does, so {@code get_stats} gives {@code getGetStatsMethod} and {@code hashCode}
     * {@code getHashCodeMethod}.
     */
    static String descriptorGetterName(String rpcName) {
        return lowerCamel("get_" + rpcName + "_method");
    }

    /** First letter lower-cased, underscores dropped and the letter after each upper-cased. */
    private static String lowerCamel(String word) {
        StringBuilder w = new StringBuilder(word.length());
        w.append(Character.toLowerCase(word.charAt(0)));
        boolean afterUnderscore = false;
        for (int i = 1; i < word.length(); i++) {
            char c = word.charAt(i);
            if (c == '_') {
                afterUnderscore = true;
            } else {
                w.append(afterUnderscore ? Character.toUpperCase(c) : c);
                afterUnderscore = false;
            }
        }
        return w.toString();
    }

    /** Joins two dotted names, either of which may be empty. */
    static String join(String prefix, String name) {
        if (prefix.isEmpty()) {
            return name;
        }
        if (name.isEmpty()) {
            return prefix;
        }
        return prefix + "." + name;
    }
}
