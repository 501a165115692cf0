package example.croupier;

import java.security.GeneralSecurityException;
import java.security.PrivateKey;
import java.time.Instant;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;

/** The events of a table's rounds, deterministic for a seed. */
final class Tables {
    private Tables() {}

    record Options(String table, int rounds, int bets, long seed, String dealer, String shaker) {}

    private static final Instant START = Instant.parse("2026-12-01T10:00:00Z");

    /**
     * Each round opened, its bets, betting closed and a result; every 7th round cancelled
     * instead, every 5th corrected after its result, every 9th voided after it.
     */
    static List<Map<String, Object>> events(Options o, PrivateKey key)
            throws GeneralSecurityException {
        Random random = new Random(o.seed() * 31 + o.table().hashCode());
        List<Map<String, Object>> out = new ArrayList<>();
        for (int r = 1; r <= o.rounds(); r++) {
            String round = o.table() + "-r" + r;
            Instant minute = START.plusSeconds(60L * r);
            Map<String, Object> opened = event("round.opened", round + "-open", o, round, minute);
            opened.put("game", "sicbo");
            if (o.dealer() != null) {
                opened.put("dealer_id", o.dealer());
            }
            if (o.shaker() != null) {
                opened.put("shaker_id", o.shaker());
            }
            out.add(opened);
            for (int seq = 1; seq <= o.bets(); seq++) {
                Map<String, Object> bet = event("bet.placed", round + "-e" + seq, o, round,
                        minute.plusSeconds(1 + seq % 20));
                bet.put("bet_id", round + "-b" + seq);
                bet.put("player_id", "player-" + (1 + random.nextInt(6)));
                bet.put("seq", seq);
                bet(random, bet);
                bet.put("stake", 100L * (1 + random.nextInt(50)));
                bet.put("currency", "EUR");
                out.add(bet);
            }
            Map<String, Object> closed =
                    event("round.betting_closed", round + "-close", o, round, minute.plusSeconds(25));
            closed.put("last_seq", o.bets());
            out.add(closed);
            if (r % 7 == 0) {
                Map<String, Object> cancelled =
                        event("round.cancelled", round + "-cancel", o, round, minute.plusSeconds(30));
                cancelled.put("reason", "shaker jammed");
                out.add(signed(cancelled, key));
                continue;
            }
            Map<String, Object> result =
                    event("round.result", round + "-result", o, round, minute.plusSeconds(30));
            List<Integer> dice = dice(random);
            result.put("dice", dice);
            out.add(signed(result, key));
            if (r % 5 == 0) { // a correction changes the outcome (the same one: invalid_transition)
                Map<String, Object> fix =
                        event("round.corrected", round + "-fix", o, round, minute.plusSeconds(45));
                fix.put("dice", List.of(dice.get(0) % 6 + 1, dice.get(1), dice.get(2)));
                fix.put("reason", "dealer misread a die");
                fix.put("authorized_by", "supervisor.ana");
                out.add(signed(fix, key));
            }
            if (r % 9 == 0) {
                Map<String, Object> voided =
                        event("round.voided", round + "-void", o, round, minute.plusSeconds(50));
                voided.put("reason", "dice set found faulty");
                voided.put("authorized_by", "supervisor.ana");
                out.add(signed(voided, key));
            }
        }
        return out;
    }

    private static Map<String, Object> event(String type, String id, Options o, String round,
            Instant at) {
        Map<String, Object> e = new LinkedHashMap<>();
        e.put("type", type);
        e.put("v", 1);
        e.put("event_id", id);
        e.put("table_id", o.table());
        e.put("round_id", round);
        e.put("at", DateTimeFormatter.ISO_INSTANT.format(at));
        return e;
    }

    private static Map<String, Object> signed(Map<String, Object> e, PrivateKey key)
            throws GeneralSecurityException {
        if (key != null) {
            e.put("sig", Signing.sign(key, e));
        }
        return e;
    }

    private static List<Integer> dice(Random random) {
        return List.of(1 + random.nextInt(6), 1 + random.nextInt(6), 1 + random.nextInt(6));
    }

    /** A Sic Bo kind and pick (contract section 8). */
    private static void bet(Random random, Map<String, Object> bet) {
        switch (random.nextInt(6)) {
            case 0 -> bet.put("kind", "big");
            case 1 -> bet.put("kind", "small");
            case 2 -> bet.put("kind", "even");
            case 3 -> {
                bet.put("kind", "single");
                bet.put("pick", List.of(1 + random.nextInt(6)));
            }
            case 4 -> {
                bet.put("kind", "total");
                bet.put("pick", List.of(4 + random.nextInt(14)));
            }
            default -> {
                bet.put("kind", "double");
                bet.put("pick", List.of(1 + random.nextInt(6)));
            }
        }
    }
}
