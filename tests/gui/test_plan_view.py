"""The Plan tab: the chart and the table show the core planner's result, chosen candidates become scenarios,
bad input is a message, and the plan exports as Markdown with its Pareto picture."""

from PySide6.QtGui import QImage

from memviz.core.planner import Requirements, pareto_front, parse_hardware, plan
from memviz.core.presets import get_preset
from memviz.core.units import to_unit
from memviz.gui.main_window import MainWindow
from memviz.gui.pareto_chart import front_steps, tooltip


def _window(qtbot):
    w = MainWindow()
    w.confirm_discard = lambda: True
    qtbot.addWidget(w)
    w.resize(1400, 900)
    w.show()
    w.set_architecture(get_preset("llama-3.1-70b").architecture(), "llama-3.1-70b")
    w.tabs.setCurrentWidget(w.plan_view)
    w._refresh_visible()
    pv = w.plan_view
    pv.gpus.setText("rtx4090x2, h100-80g")
    pv.context.setValue(8192)
    pv.concurrency.setValue(2)
    return w, pv


def test_chart_and_table_are_the_planners_answer(qtbot):
    w, pv = _window(qtbot)
    result = pv.run()
    core = plan(get_preset("llama-3.1-70b").architecture(), parse_hardware("rtx4090x2, h100-80g"), Requirements(8192, 2))
    assert [c.label() for c in result.ranked] == [c.label() for c in core.ranked]
    assert pv.table.rowCount() == min(len(core.ranked), 50)
    assert [pv.table.item(r, 1).text() for r in range(3)] == [c.label() for c in core.ranked[:3]]
    assert [c.label() for c in pv.chart.front] == [c.label() for c in pareto_front(core.ranked)]
    xs, ys = front_steps(pv.chart.front, w.session.unit)
    assert xs[0] == to_unit(pv.chart.front[0].needed_bytes, w.session.unit) and ys[-1] == pv.chart.front[-1].quality.loss_pct
    assert all(a >= b for a, b in zip(ys, ys[1:], strict=False))  # a staircase going down
    evidence = next(c for c in pv.chart.points if c.quality.weights.evidence is not None)
    assert evidence.quality.weights.evidence.source_url in tooltip(evidence, w.session.unit)


def test_selected_candidates_become_scenarios_undoably(qtbot):
    w, pv = _window(qtbot)
    pv.run()
    before = w.session
    pv.table.selectRow(2)
    pv._add_selected()
    added = pv.result.ranked[2].scenario
    assert w.session.scenarios[-1] == added and len(w.session.scenarios) == len(before.scenarios) + 1
    assert pv.result.ranked[2].hardware.gpu.key in w.session.gpus
    w.undo()
    assert w.session == before


def test_bad_input_is_a_message_and_keeps_the_last_plan(qtbot):
    w, pv = _window(qtbot)
    good = pv.run()
    pv.gpus.setText("h999")
    assert pv.run() is None and "unknown GPU" in pv.message.text() and pv.result is good
    pv.gpus.setText("rtx4090")
    for box in pv.engines.values():
        box.setChecked(False)
    assert pv.run() is None and "at least one engine" in pv.message.text()


def test_nothing_fits_says_the_closest(qtbot):
    w, pv = _window(qtbot)
    pv.gpus.setText("rtx3060-12g")
    pv.run()
    assert pv.table.rowCount() == 0 and "nothing fits: the closest is" in pv.message.text()


def test_plan_exports_markdown_and_its_picture(qtbot, tmp_path):
    w, pv = _window(qtbot)
    pv.run()
    md = pv.write_markdown(tmp_path / "plan.md")
    text = md.read_text()
    assert text.startswith("## Plan: Llama-3.1-70B") and "](plan.pareto.png)" in text
    img = QImage(str(tmp_path / "plan.pareto.png"))
    assert not img.isNull() and img.width() == 1800
    assert w.current_chart() is pv.chart
    svg = w.export_current_chart(tmp_path / "pareto.svg")
    assert "non-dominated front" in svg.read_text()


def test_a_unit_switch_redraws_the_plan_in_the_new_unit(qtbot):
    from memviz.core.units import Unit

    w, pv = _window(qtbot)
    pv.run()
    w.set_unit(Unit.GB)
    w._refresh_visible()
    assert pv.unit is Unit.GB and pv.chart.unit is Unit.GB
    assert " GB / " in pv.table.item(0, 3).text()
