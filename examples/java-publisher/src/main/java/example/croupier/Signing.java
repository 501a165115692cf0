package example.croupier;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.KeyFactory;
import java.security.KeyPairGenerator;
import java.security.PrivateKey;
import java.security.SecureRandom;
import java.security.Signature;
import java.security.interfaces.EdECPublicKey;
import java.security.spec.EdECPrivateKeySpec;
import java.security.spec.NamedParameterSpec;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;

/**
 * Ed25519 signatures of money-moving round events (croupier contract, section 3, "Signed round
 * events"), with the JDK's own Ed25519 (java.security, Java 15 and later).
 */
final class Signing {
    static final List<String> SIGNED =
            List.of("round.result", "round.corrected", "round.voided", "round.cancelled");

    private static final Base64.Encoder TEXT = Base64.getUrlEncoder().withoutPadding();
    private static final Base64.Decoder DATA = Base64.getUrlDecoder();

    private Signing() {}

    /**
     * The message: type, v, event_id, table_id, round_id, at, the outcome, reason and
     * authorized_by, joined by line feeds, as UTF-8; a value the event type has not is empty.
     */
    static byte[] message(Map<String, Object> event) {
        String type = (String) event.get("type");
        String outcome = "";
        String reason = "";
        String authorizedBy = "";
        switch (type) {
            case "round.result" -> outcome = dice(event);
            case "round.corrected" -> {
                outcome = dice(event);
                reason = (String) event.get("reason");
                authorizedBy = (String) event.get("authorized_by");
            }
            case "round.voided" -> {
                reason = (String) event.get("reason");
                authorizedBy = (String) event.get("authorized_by");
            }
            case "round.cancelled" -> reason = (String) event.get("reason");
            default -> throw new IllegalArgumentException(type + " is never signed");
        }
        String text = String.join("\n", type, String.valueOf(event.get("v")),
                (String) event.get("event_id"), (String) event.get("table_id"),
                (String) event.get("round_id"), (String) event.get("at"), outcome, reason,
                authorizedBy);
        return text.getBytes(StandardCharsets.UTF_8);
    }

    /** Dice as signed: their digits joined by "-" in the event's order (6-5-1). */
    @SuppressWarnings("unchecked")
    private static String dice(Map<String, Object> event) {
        return ((List<Integer>) event.get("dice")).stream()
                .map(String::valueOf).collect(Collectors.joining("-"));
    }

    /** The sig: Ed25519 of the message, base64url without padding (86 characters). */
    static String sign(PrivateKey key, Map<String, Object> event) throws GeneralSecurityException {
        Signature signature = Signature.getInstance("Ed25519");
        signature.initSign(key);
        signature.update(message(event));
        return TEXT.encodeToString(signature.sign());
    }

    /** A table's private key file, as `croupier keys new TABLE` writes it. */
    record KeyFile(String tableId, PrivateKey key) {}

    private static final Pattern FIELD = Pattern.compile("\"(\\w+)\"\\s*:\\s*\"([^\"]*)\"");

    /** Reads a private key file, checking that its public key is that of its seed. */
    static KeyFile read(Path path) throws Exception {
        String json = Files.readString(path);
        Map<String, String> fields = new java.util.HashMap<>();
        Matcher m = FIELD.matcher(json);
        while (m.find()) {
            fields.put(m.group(1), m.group(2));
        }
        byte[] seed = DATA.decode(fields.getOrDefault("private_key", ""));
        if (seed.length != 32) {
            throw new IllegalArgumentException(path + ": private_key is not 32 bytes of base64url");
        }
        PrivateKey key = KeyFactory.getInstance("Ed25519")
                .generatePrivate(new EdECPrivateKeySpec(NamedParameterSpec.ED25519, seed));
        if (!publicText(seed).equals(fields.get("public_key"))) {
            throw new IllegalArgumentException(path + ": public_key is not that of private_key");
        }
        return new KeyFile(fields.get("table_id"), key);
    }

    /**
     * The public key of a seed as the table keys file writes it (32 bytes, base64url). The JDK
     * derives a public key only while generating a pair, from the random bytes it draws: given
     * the seed as those bytes, it derives the seed's own public key.
     */
    static String publicText(byte[] seed) throws GeneralSecurityException {
        KeyPairGenerator generator = KeyPairGenerator.getInstance("Ed25519");
        generator.initialize(NamedParameterSpec.ED25519, new SecureRandom() {
            @Override
            public void nextBytes(byte[] bytes) {
                System.arraycopy(seed, 0, bytes, 0, bytes.length);
            }
        });
        EdECPublicKey key = (EdECPublicKey) generator.generateKeyPair().getPublic();
        // RFC 8032 encoding: y little-endian, the top bit of the last byte the parity of x.
        byte[] y = key.getPoint().getY().toByteArray();
        byte[] encoded = new byte[32];
        for (int i = 0; i < y.length && i < 32; i++) {
            encoded[i] = y[y.length - 1 - i];
        }
        if (key.getPoint().isXOdd()) {
            encoded[31] |= (byte) 0x80;
        }
        return TEXT.encodeToString(encoded);
    }
}
