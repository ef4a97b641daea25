"""Turn the use cases' metric points into EMF through Powertools."""

from __future__ import annotations

from aws_lambda_powertools import Metrics
from aws_lambda_powertools.metrics import MetricUnit, single_metric

from sendledger import names
from sendledger.ports.reports import MetricPoint


def emit(metrics: Metrics, points: list[MetricPoint]) -> None:
    for point in points:
        unit = MetricUnit(point.unit)
        if not point.dimensions:
            metrics.add_metric(name=point.name, unit=unit, value=point.value)
            continue
        with single_metric(name=point.name, unit=unit, value=point.value, namespace=names.METRICS_NAMESPACE) as metric:
            metric.add_dimension(name="service", value=names.METRICS_SERVICE)
            for key, value in point.dimensions.items():
                metric.add_dimension(name=key, value=value)
