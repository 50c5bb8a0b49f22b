"""The load benchmark's report: latency percentiles per kind, throughput, lateness, CPU.
See bench/load.py."""

import os
import statistics


def pct(sorted_values: list[float], p: float) -> float | None:
    if not sorted_values:
        return None
    if len(sorted_values) == 1:
        return round(sorted_values[0], 2)
    return round(
        statistics.quantiles(sorted_values, n=1000, method="inclusive")[min(998, int(p * 10) - 1)],
        2,
    )


class LoadReport:
    """Mixin of ``Bench`` (bench/load.py): turns the measured requests into the printed report."""

    def report(self, results, errors, wall: float, total: int, cpu: dict) -> dict:
        per_kind = {}
        print(
            f"\n{'kind':<9} {'count':>6} {'errors':>6} {'p50':>8} {'p90':>8} {'p99':>8} "
            f"{'max':>8}   (ms)"
        )
        for kind, _ in self.args.mix:
            lat = sorted(r[2] for r in results if r[0] == kind)
            if not lat:
                continue
            n_err = sum(errors[kind].values())
            row = {
                "count": len(lat),
                "errors": n_err,
                "p50": pct(lat, 50),
                "p90": pct(lat, 90),
                "p99": pct(lat, 99),
                "max": round(lat[-1], 2),
            }
            if errors[kind]:
                row["error_kinds"] = dict(errors[kind])
            per_kind[kind] = row
            print(
                f"{kind:<9} {row['count']:>6} {n_err:>6} {row['p50']:>8} {row['p90']:>8} "
                f"{row['p99']:>8} {row['max']:>8}"
            )
        windows = []
        for w in range(int(self.args.duration // 5) + 1):
            lat = sorted(r[2] for r in results if w * 5 <= r[4] < (w + 1) * 5)
            if lat:
                windows.append({"t": w * 5, "p50": pct(lat, 50), "p99": pct(lat, 99)})
        print(
            "timeline (all kinds, by scheduled second): "
            + "; ".join(f"{w['t']}s p50 {w['p50']} p99 {w['p99']}" for w in windows)
        )
        lateness = sorted(r[3] for r in results)
        done = len(results)
        summary = {
            "bench": "load",
            "target_rate": self.args.rate,
            "duration_s": self.args.duration,
            "requests": total,
            "completed": done,
            "errors": sum(sum(e.values()) for e in errors.values()),
            "throughput_rps": round(done / wall, 1),
            "recall_p50_ms": per_kind.get("recall", {}).get("p50"),
            "recall_p99_ms": per_kind.get("recall", {}).get("p99"),
            "send_late_p99_ms": pct(lateness, 99),
            "database": "postgresql" if self.args.postgres else "sqlite",
            "gunicorn": f"{self.args.workers}x{self.args.threads} gthread",
            "cpus": os.cpu_count(),
            "cpu_cores_busy": cpu,
            "per_kind": per_kind,
            "timeline": windows,
        }
        summary["target_met"] = (
            summary["errors"] == 0
            and summary["recall_p99_ms"] is not None
            and summary["recall_p99_ms"] <= 50
        )
        print(
            f"\nthroughput {summary['throughput_rps']} req/s over {wall:.1f} s "
            f"(target {self.args.rate}/s); {summary['errors']} errors; "
            f"sends started late by p99 {summary['send_late_p99_ms']} ms"
        )
        print(
            f"CPU cores busy (of {os.cpu_count()}): "
            + ", ".join(f"{name} {value}" for name, value in cpu.items())
        )
        return summary
