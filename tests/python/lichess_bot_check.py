"""What lichess-bot does with an engine, done through python-chess (the library it uses).

Opens the engine, sets the options of the lichess-bot configuration in docs/setups.md
as lichess-bot would, and every other option it declares to its default, plays games
against itself on the clock with pondering, runs a MultiPV analysis, and plays a
Chess960 opening. Exits non-zero (with the reason) on any failure.

Usage: python3 tests/python/lichess_bot_check.py path/to/nue [syzygy-folder]

Without the tables' folder (or when it does not exist) the tablebase part is skipped,
unless NUE_REQUIRE_ALL is set.
"""

import os
import sys
import time

import chess
import chess.engine

SETUPS = os.path.join(os.path.dirname(__file__), "..", "..", "docs", "setups.md")


def documented_uci_options(path=SETUPS):
    """The `uci_options:` of the lichess-bot section of docs/setups.md, typed as YAML
    would type them (lichess-bot reads its config with a YAML parser)."""
    text = open(path, encoding="utf-8").read()
    block = text[text.index("<!-- setup: lichess-bot -->"):]
    block = block[block.index("```yaml") + len("```yaml"):]
    block = block[:block.index("```")]
    lines = block.splitlines()
    start = [line.strip() for line in lines].index("uci_options:") + 1
    options = {}
    for line in lines[start:]:
        if not line.startswith("    "):
            break
        name, value = line.strip().split(": ", 1)
        value = value.strip()
        if value.startswith('"'):
            options[name] = value.strip('"')
        elif value in ("true", "false"):
            options[name] = value == "true"
        else:
            options[name] = int(value)
    return options


def configure_everything(engine, settings):
    """The documented settings, as lichess-bot sends them, then every other option at
    its default; managed options (Ponder, MultiPV, UCI_Chess960) are python-chess's."""
    declared = set(engine.options)
    unknown = set(settings) - declared
    assert not unknown, f"docs/setups.md sets options the engine lacks: {unknown}"
    engine.configure(settings)
    for name, option in engine.options.items():
        if option.is_managed() or name in settings:
            continue
        if option.type == "button":
            engine.configure({name: None})
        elif option.default is not None:
            engine.configure({name: option.default})
    missing = {"Hash", "Threads", "Ponder", "MultiPV", "Move Overhead", "EvalFile",
               "UCI_Chess960", "UCI_ShowWDL", "SyzygyPath", "Clear Hash",
               "UCI_LimitStrength", "UCI_Elo"} - declared
    assert not missing, f"options not declared: {missing}"


# Openings for the clock games: the start position first, then two unbalanced ones, so
# that a game drawn early by repetition is followed by one that is not played the same way.
CLOCK_OPENINGS = [
    chess.STARTING_FEN,
    "rnbqkb1r/pp1p1ppp/4pn2/2p5/2PP4/5N2/PP2PPPP/RNBQKB1R w KQkq - 0 4",
    "r1bqkbnr/pp1ppp1p/2n3p1/2p5/4P3/2N3P1/PPPP1P1P/R1BQKBNR w KQkq - 0 4",
]

# The clock games go on until this many plies have been played on the clock in all.
CLOCK_PLIES = 60


def play_clock_games(engine):
    """Games on the clock, one after another, until CLOCK_PLIES plies have been played:
    a game may end early by a rule (a repetition in self-play is legal chess), and the
    clock handling must still be exercised over a game's worth of moves."""
    played = 0
    for fen in CLOCK_OPENINGS:
        played += play_clock_game(engine, chess.Board(fen))
        if played >= CLOCK_PLIES:
            break
    assert played >= CLOCK_PLIES, f"only {played} plies on the clock in {len(CLOCK_OPENINGS)} games"


def play_clock_game(engine, board):
    """A game with real clocks and pondering, as lichess-bot plays it: each move's time
    comes off the mover's clock, the increment goes on, and a clock below zero loses.
    Returns the number of plies played."""
    start_ply = board.ply()
    clock = {chess.WHITE: 3.0, chess.BLACK: 3.0}
    increment = 0.03
    lowest = dict(clock)
    while not board.is_game_over(claim_draw=True) and board.ply() < 300:
        limit = chess.engine.Limit(
            white_clock=clock[chess.WHITE], black_clock=clock[chess.BLACK],
            white_inc=increment, black_inc=increment)
        side = board.turn
        start = time.monotonic()
        result = engine.play(board, limit, ponder=True, info=chess.engine.INFO_ALL)
        clock[side] -= time.monotonic() - start
        assert clock[side] > 0, f"{chess.COLOR_NAMES[side]} lost on time at ply {board.ply()}"
        lowest[side] = min(lowest[side], clock[side])
        clock[side] += increment
        assert result.move in board.legal_moves, f"illegal move {result.move} in {board.fen()}"
        if result.ponder is not None:
            after = board.copy()
            after.push(result.move)
            assert result.ponder in after.legal_moves, f"illegal ponder move {result.ponder}"
        board.push(result.move)
    outcome = board.outcome(claim_draw=True)
    ending = outcome.termination.name if outcome else "300 plies"
    played = board.ply() - start_ply
    print(f"clock game: {played} plies, {board.result(claim_draw=True)} ({ending}); "
          f"lowest clocks {lowest[chess.WHITE]:.2f} s and {lowest[chess.BLACK]:.2f} s")
    # Played to an end the rules define (or the ply cap), not abandoned early.
    assert outcome is not None or board.ply() >= 300
    return played


def ponderhit_after_a_proven_mate(engine):
    """The reply the engine pondered on comes after its ponder search has proven a mate:
    python-chess keeps only the info lines that follow `ponderhit`, so the score must
    come again there (lichess-bot logs it)."""
    board = chess.Board("r2qkb1r/pp2nppp/3p4/2pNN1B1/2BnP3/3P4/PPP2PPP/R2bK2R w KQkq - 1 1")
    limit = chess.engine.Limit(white_clock=10.0, black_clock=10.0)
    first = engine.play(board, limit, ponder=True)
    assert first.ponder is not None, first
    board.push(first.move)
    board.push(first.ponder)
    time.sleep(0.5)  # the ponder search proves the mate in one and waits
    second = engine.play(board, limit, ponder=True, info=chess.engine.INFO_ALL)
    assert second.move in board.legal_moves, second
    assert second.info.get("score") is not None, second.info
    assert second.info["score"].relative == chess.engine.Mate(1), second.info["score"]


def analyse_multipv(engine):
    board = chess.Board("r1bqkbnr/pppp1ppp/2n5/4p3/4P3/5N2/PPPP1PPP/RNBQKB1R w KQkq - 2 3")
    infos = engine.analyse(board, chess.engine.Limit(depth=8), multipv=3)
    assert len(infos) == 3, infos
    for info in infos:
        assert "score" in info and "pv" in info and info["pv"], info
        assert info["pv"][0] in board.legal_moves


def find_mate(engine):
    board = chess.Board("r2qkb1r/pp2nppp/3p4/2pNN1B1/2BnP3/3P4/PPP2PPP/R2bK2R w KQkq - 1 1")
    info = engine.analyse(board, chess.engine.Limit(mate=2))
    assert info["score"].relative == chess.engine.Mate(2), info["score"]


def win_draw_loss_and_tablebases(engine, tables):
    """lichess-bot's defaults: UCI_ShowWDL on and a SyzygyPath. python-chess parses the
    wdl field into the info it returns, and the score of a tablebase win shows."""
    engine.configure({"UCI_ShowWDL": True, "SyzygyPath": tables})
    board = chess.Board("r1bqkbnr/pppp1ppp/2n5/4p3/4P3/5N2/PPPP1PPP/RNBQKB1R w KQkq - 2 3")
    info = engine.analyse(board, chess.engine.Limit(depth=8))
    wdl = info["wdl"].relative
    assert wdl.total() == 1000 and wdl.wins > 0 and wdl.losses > 0, wdl
    board = chess.Board("8/8/3k4/8/8/8/8/R3K3 w - - 0 1")
    info = engine.analyse(board, chess.engine.Limit(depth=8))
    assert info["wdl"].relative.wins == 1000, info
    assert info["score"].relative.score() > 10000 and info.get("tbhits", 0) > 0, info
    engine.configure({"UCI_ShowWDL": False, "SyzygyPath": ""})
    info = engine.analyse(board, chess.engine.Limit(depth=4))
    assert "wdl" not in info and info.get("tbhits", 0) == 0, info


def play_limited_strength(engine):
    """A weaker opponent, as a bot operator offers one: legal moves on the clock, each the
    first move of the line python-chess saw last."""
    engine.configure({"UCI_LimitStrength": True, "UCI_Elo": 1500})
    board = chess.Board()
    for _ in range(30):
        if board.is_game_over():
            break
        limit = chess.engine.Limit(white_clock=60, black_clock=60)
        result = engine.play(board, limit, info=chess.engine.INFO_ALL)
        assert result.move in board.legal_moves, f"illegal move {result.move}"
        pv = result.info.get("pv")
        assert pv and pv[0] == result.move, (result.move, pv)
        board.push(result.move)
    engine.configure({"UCI_LimitStrength": False})
    print(f"limited strength: {board.ply()} plies")


def play_chess960(engine):
    board = chess.Board.from_chess960_pos(518 - 1)  # not the standard setup
    for _ in range(40):
        if board.is_game_over():
            break
        result = engine.play(board, chess.engine.Limit(time=0.02))
        assert result.move in board.legal_moves, f"illegal 960 move {result.move}"
        board.push(result.move)
    print(f"chess960: {board.ply()} plies")
    assert board.ply() == 40 or board.is_game_over(), board.ply()


def main():
    path = sys.argv[1]
    tables = sys.argv[2] if len(sys.argv) > 2 else None
    if tables is None or not os.path.isdir(tables):
        assert not os.environ.get("NUE_REQUIRE_ALL"), f"no Syzygy tables at {tables}"
        note = ("skipped: the python-chess check's tablebase part needs a folder of 3- and "
                "4-piece Syzygy tables (https://tablebase.lichess.ovh/tables/standard/), "
                f"got {tables}")
        print(note)
        if os.environ.get("NUE_SKIP_LOG"):
            with open(os.environ["NUE_SKIP_LOG"], "a", encoding="utf-8") as log:
                log.write(note + "\n")
        tables = None
    settings = documented_uci_options()
    # The reader's own folder in the documentation; here the test's tables, or none.
    settings["SyzygyPath"] = tables or ""
    with chess.engine.SimpleEngine.popen_uci(path, timeout=30) as engine:
        configure_everything(engine, settings)
        engine.ping()
        play_clock_games(engine)
        ponderhit_after_a_proven_mate(engine)
        analyse_multipv(engine)
        find_mate(engine)
        if tables:
            win_draw_loss_and_tablebases(engine, tables)
        play_limited_strength(engine)
        play_chess960(engine)
    print("python-chess: ok")


if __name__ == "__main__":
    main()
